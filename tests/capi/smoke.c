/* Smoke test of the C ABI (src/capi/forge.h), run by tests/capi.rs:
 *   gcc -std=c11 -Wall -Wextra -Werror -I src/capi tests/capi/smoke.c -L DIR -lforge -Wl,-rpath,DIR
 *   ./smoke profiles/sm_90a-h200.toml
 * Needs no GPU: a dispatcher that cannot open (no device, another architecture) is reported,
 * not failed. Exit status 0 when every check passed. */
#include "forge.h"

#include <stdio.h>
#include <string.h>

static int checks = 0, failures = 0;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        ++checks;                                                          \
        if (!(cond)) {                                                     \
            ++failures;                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

static void show(const char *what, const forge_selection *sel) {
    printf("%-22s %s (rule %s, entry %d, distance %.3f)\n", what, sel->schedule,
           forge_rule_name(sel->rule), (int)sel->entry, sel->distance);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SHIPPED_PROFILE SCHEDULE_OF_2048_CUBED\n", argv[0]);
        return 2;
    }
    const char *shipped = argv[1];
    const char *expected_2048 = argv[2]; /* the profile's entry for 2048³ TN (from the Rust side) */
    printf("forge %s\n", forge_version());
    CHECK(strcmp(forge_last_error(), "") == 0, "fresh thread has message '%s'", forge_last_error());

    /* 1. A missing profile: an error code and a message naming the file. */
    const char *missing = "/nonexistent/forge-smoke-profile.toml";
    forge_profile *profile = (forge_profile *)&checks; /* must be reset to NULL */
    forge_status s = forge_profile_open(missing, &profile);
    CHECK(s == FORGE_ERROR_PROFILE, "status %d (%s)", s, forge_status_name(s));
    CHECK(profile == NULL, "handle not reset");
    CHECK(contains(forge_last_error(), "forge_profile_open: cannot read profile "
                                       "/nonexistent/forge-smoke-profile.toml"),
          "message '%s'", forge_last_error());
    printf("missing profile: %s: %s\n", forge_status_name(s), forge_last_error());

    forge_dispatcher *dispatcher = (forge_dispatcher *)&checks;
    s = forge_dispatcher_open(missing, 0, NULL, &dispatcher);
    CHECK(s == FORGE_ERROR_PROFILE, "status %d (%s)", s, forge_status_name(s));
    CHECK(dispatcher == NULL, "handle not reset");
    CHECK(contains(forge_last_error(), "forge_dispatcher_open: cannot read profile"), "message '%s'",
          forge_last_error());

    s = forge_profile_open(NULL, &profile);
    CHECK(s == FORGE_ERROR_INVALID_ARGUMENT, "status %d", s);
    CHECK(strcmp(forge_last_error(), "forge_profile_open: path is NULL") == 0, "message '%s'",
          forge_last_error());

    /* 2. Selection on the shipped profile. */
    s = forge_profile_open(shipped, &profile);
    CHECK(s == FORGE_OK, "open %s: %s", shipped, forge_last_error());
    CHECK(strcmp(forge_last_error(), "") == 0, "success left message '%s'", forge_last_error());
    if (s == FORGE_OK) {
        forge_selection sel;
        s = forge_profile_select(profile, FORGE_LAYOUT_TN, 2048, 2048, 2048, &sel);
        CHECK(s == FORGE_OK, "%s", forge_last_error());
        CHECK(strcmp(sel.schedule, expected_2048) == 0, "got %s, expected %s", sel.schedule,
              expected_2048);
        CHECK(sel.rule == FORGE_RULE_EXACT && sel.entry >= 0 && sel.distance == 0.0,
              "rule %d entry %d", (int)sel.rule, (int)sel.entry);
        show("2048x2048x2048", &sel);

        s = forge_profile_select(profile, FORGE_LAYOUT_TN, 2000, 2048, 2048, &sel);
        CHECK(s == FORGE_OK, "%s", forge_last_error());
        /* Not tuned: the calibrated cost model's best of the profile's gated schedules. */
        CHECK(sel.rule == FORGE_RULE_MODEL && sel.entry == -1, "rule %d", (int)sel.rule);
        show("2000x2048x2048", &sel);

        /* K % 4 != 0: the same rule (a TMA schedule reads a padded copy). */
        s = forge_profile_select(profile, FORGE_LAYOUT_TN, 1000, 1000, 999, &sel);
        CHECK(s == FORGE_OK, "%s", forge_last_error());
        CHECK(sel.rule == FORGE_RULE_MODEL, "rule %d", (int)sel.rule);
        show("1000x1000x999", &sel);

        /* A profile answers for any layout; it has no NN entry. */
        s = forge_profile_select(profile, FORGE_LAYOUT_NN, 2048, 2048, 2048, &sel);
        CHECK(s == FORGE_OK && sel.rule == FORGE_RULE_CANONICAL && sel.entry == -1,
              "status %d rule %d", s, (int)sel.rule);

        s = forge_profile_select(profile, 9, 2048, 2048, 2048, &sel);
        CHECK(s == FORGE_ERROR_INVALID_ARGUMENT, "status %d", s);
        CHECK(contains(forge_last_error(), "layout = 9 is not a forge_layout"), "message '%s'",
              forge_last_error());
        s = forge_profile_select(profile, FORGE_LAYOUT_TN, 0, 2048, 2048, &sel);
        CHECK(s == FORGE_ERROR_INVALID_ARGUMENT, "status %d", s);
        CHECK(contains(forge_last_error(), "m = 0 is out of range"), "message '%s'",
              forge_last_error());
        s = forge_profile_select(profile, FORGE_LAYOUT_TN, 1, 1, 1, NULL);
        CHECK(s == FORGE_ERROR_INVALID_ARGUMENT, "status %d", s);
        CHECK(contains(forge_last_error(), "out is NULL"), "message '%s'", forge_last_error());
    }

    /* 3. A dispatcher on the shipped profile: opens only on an sm_90a device. */
    s = forge_dispatcher_open(shipped, 0, NULL, &dispatcher);
    if (s == FORGE_OK) {
        forge_selection sel;
        s = forge_dispatcher_select(dispatcher, FORGE_LAYOUT_TN, 4096, 4096, 4096, &sel);
        CHECK(s == FORGE_OK, "%s", forge_last_error());
        show("device 0, 4096^3", &sel);
        s = forge_dispatcher_select(dispatcher, FORGE_LAYOUT_NT, 64, 64, 64, &sel);
        CHECK(s == FORGE_OK, "%s", forge_last_error());
        /* Rejected before anything reaches the device. */
        float *fake = (float *)(uintptr_t)0x10000;
        s = forge_gemm(dispatcher, FORGE_LAYOUT_TN, 64, 64, 64, fake, 128, fake, 64, fake, 64, NULL);
        CHECK(s == FORGE_ERROR_UNSUPPORTED, "status %d", s);
        CHECK(contains(forge_last_error(), "lda = 128 is not supported yet"), "message '%s'",
              forge_last_error());
        printf("dispatcher on device 0: opened\n");
    } else {
        CHECK(s == FORGE_ERROR_NO_DEVICE || s == FORGE_ERROR_PROFILE || s == FORGE_ERROR_DEVICE,
              "status %d: %s", s, forge_last_error());
        CHECK(dispatcher == NULL, "handle not reset");
        printf("dispatcher on device 0: %s: %s\n", forge_status_name(s), forge_last_error());
    }
    s = forge_gemm(NULL, FORGE_LAYOUT_TN, 1, 1, 1, NULL, 1, NULL, 1, NULL, 1, NULL);
    CHECK(s == FORGE_ERROR_INVALID_ARGUMENT, "status %d", s);
    CHECK(strcmp(forge_last_error(), "forge_gemm: dispatcher is NULL") == 0, "message '%s'",
          forge_last_error());

    /* 4. Close (NULL is a no-op). */
    forge_dispatcher_close(dispatcher);
    forge_dispatcher_close(NULL);
    forge_profile_close(profile);
    forge_profile_close(NULL);

    printf("smoke: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
