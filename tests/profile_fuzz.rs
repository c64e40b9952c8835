//! Property test over profile text: thousands of mutations of the shipped H200 profile (byte
//! flips, truncations, numbers replaced by 0 / -1 / nan / huge values, schedule names altered,
//! lines and entries duplicated, deleted or swapped, and combinations), from a fixed seed.
//! Each either fails with one clear line that names the file, or loads into a profile whose
//! every selection, over a grid of shapes with ragged ones, is a valid, bit-exact, runnable
//! schedule.

use forge::problem::Problem;
use forge::profile::{Profile, Rule};
use forge::schedule::{Dtype, Layout, Schedule};
use forge::shape::Shape;
use forge::space;
use std::collections::{BTreeMap, HashSet};

/// Cases run (each one mutated text).
const CASES: usize = 3000;
const SEED: u64 = 0x5EED_F026_1202;
const NAME: &str = "fuzz/profile.toml";

/// splitmix64: a small deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn shipped() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/profile_h200_trunc_17.toml"
    ))
    .unwrap()
}

const VALUES: [&str; 20] = [
    "0",
    "-1",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "4294967295",
    "4294967296",
    "2147483647",
    "2147483648",
    "1e308",
    "0.0",
    "-0.0",
    "1.5",
    "true",
    "\"\"",
    "\"tf32\"",
    "\"bf16\"",
    "\"passed\"",
    "[]",
];

/// Alterations of a schedule name: (from, to) replaced once.
const SCHEDULE_EDITS: [(&str, &str); 16] = [
    ("_k1", "_k2"),
    ("_k1", "_k4"),
    ("_k1", "_k0"),
    ("tf32", "bf16"),
    ("tf32", "fp16"),
    ("wgmma_", "mma_sync_"),
    ("_pers_", "_sk_"),
    ("_np_", "_sk_"),
    ("_np_", "_pers_"),
    ("_c1_", "_c2_"),
    ("_wg2_", "_wg1_"),
    ("_s4_", "_s9_"),
    ("_s7_", "_s2_"),
    ("128x", "256x"),
    ("x32_", "x16_"),
    ("swz16", "swz32"),
];

fn lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_string).collect()
}

/// One mutation; returns its kind (for the tally).
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) -> &'static str {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let has_entries = text.contains("[[entry]]");
    let has_fields = text.contains(" = ");
    let has_names = text.contains("\"wgmma_") || text.contains("\"mma_sync_");
    if bytes.is_empty() {
        bytes.push(b'[');
        return "byte added";
    }
    match rng.below(12) {
        2 | 10 if !has_entries => {
            bytes.truncate(rng.below(bytes.len()));
            "truncation"
        }
        3..=6 if !has_fields || !has_names => {
            let i = rng.below(bytes.len());
            bytes[i] ^= 1 << rng.below(8);
            "byte flip"
        }
        0 => {
            let i = rng.below(bytes.len());
            bytes[i] ^= 1 << rng.below(8);
            "byte flip"
        }
        1 => {
            let i = rng.below(bytes.len());
            bytes.truncate(i);
            "truncation"
        }
        2 => {
            // Cut at an entry boundary: the last n entries go.
            let starts: Vec<usize> = text.match_indices("[[entry]]").map(|(i, _)| i).collect();
            let cut = starts[rng.below(starts.len())];
            bytes.truncate(cut);
            "truncation at an entry"
        }
        3 | 4 => {
            let mut ls = lines(&text);
            let candidates: Vec<usize> = (0..ls.len()).filter(|&i| ls[i].contains(" = ")).collect();
            let i = *rng.pick(&candidates);
            let key = ls[i].split(" = ").next().unwrap().to_string();
            let value = rng.pick(&VALUES);
            ls[i] = format!("{key} = {value}\n");
            *bytes = ls.concat().into_bytes();
            "field value"
        }
        5 | 6 => {
            let names: Vec<(usize, &str)> = text
                .match_indices("\"")
                .collect::<Vec<_>>()
                .chunks(2)
                .filter_map(|p| match p {
                    [(a, _), (b, _)] => Some((*a + 1, &text[*a + 1..*b])),
                    _ => None,
                })
                .filter(|(_, s)| s.starts_with("wgmma_") || s.starts_with("mma_sync_"))
                .collect();
            let (at, name) = *rng.pick(&names);
            let (from, to) = *rng.pick(&SCHEDULE_EDITS);
            let edited = name.replacen(from, to, 1);
            let mut t = text.clone();
            t.replace_range(at..at + name.len(), &edited);
            *bytes = t.into_bytes();
            "schedule name"
        }
        7 => {
            let mut ls = lines(&text);
            let i = rng.below(ls.len());
            let line = ls[i].clone();
            ls.insert(i, line);
            *bytes = ls.concat().into_bytes();
            "line duplicated"
        }
        8 => {
            let mut ls = lines(&text);
            let i = rng.below(ls.len());
            ls.remove(i);
            *bytes = ls.concat().into_bytes();
            "line deleted"
        }
        9 => {
            let mut ls = lines(&text);
            let (i, j) = (rng.below(ls.len()), rng.below(ls.len()));
            ls.swap(i, j);
            *bytes = ls.concat().into_bytes();
            "lines swapped"
        }
        10 => {
            // An entry duplicated, possibly with its count fixed up (the duplicate is the error).
            let starts: Vec<usize> = text.match_indices("[[entry]]").map(|(i, _)| i).collect();
            let k = rng.below(starts.len());
            let end = starts.get(k + 1).copied().unwrap_or(text.len());
            let block = text[starts[k]..end].to_string();
            let mut t = format!("{text}\n{block}");
            if rng.below(2) == 0 {
                t = t.replace("entries = 17", "entries = 18");
            }
            *bytes = t.into_bytes();
            "entry duplicated"
        }
        _ => {
            let (from, to) = *rng.pick(&[
                ("arch = \"sm_90a\"", "arch = \"sm_80\""),
                ("arch = \"sm_90a\"", "arch = \"sm_120\""),
                ("arch = \"sm_90a\"", "arch = \"sm_99\""),
                ("entries = 17", "entries = 16"),
                ("entries = 17", "entries = 0"),
                ("measured = true", "measured = false"),
                (
                    "numerical_contract = \"tf32-trunc-k8-inorder\"",
                    "numerical_contract = \"fast\"",
                ),
                (
                    "canonical_schedule = \"mma_sync_tf32",
                    "canonical_schedule = \"mma_sync_bf16",
                ),
                (
                    "_s2_w8_swz1_np_c1_k1\"\ncublas",
                    "_s3_w8_swz1_np_c1_k1\"\ncublas",
                ),
                ("gate = \"passed\"", "gate = \"unverified\""),
                ("layout = \"tn\"", "layout = \"nn\""),
                ("dtype = \"tf32\"", "dtype = \"bf16\""),
                ("\n[[entry]]", "\nunknown_key = 1\n[[entry]]"),
                ("gate = \"passed\"", "gate = \"passed\"\nnote = \"x\""),
                (
                    "runners_up = [",
                    "runners_up = [\"wgmma_tf32_128x256x32_s4_wg2_swz16_np_c1_k2\",",
                ),
                ("schema_version = 2", "schema_version = 1"),
                ("schema_version = 3", "schema_version = 4"),
            ]);
            let t = if rng.below(2) == 0 {
                text.replacen(from, to, 1)
            } else {
                text.replace(from, to)
            };
            *bytes = t.into_bytes();
            "meta or table edit"
        }
    }
}

fn shapes() -> Vec<Shape> {
    let mut out: Vec<Shape> = [
        1, 7, 64, 127, 128, 257, 512, 768, 1000, 1024, 2048, 3000, 4096, 8192,
    ]
    .iter()
    .map(|&d| Shape::new(d, d, d))
    .collect();
    out.extend([
        Shape::new(257, 513, 1025),
        Shape::new(257, 513, 1028),
        Shape::new(999, 1001, 1003),
        Shape::new(1, 1, 1),
        Shape::new(128, 5376, 7168),
        Shape::new(128, 21504, 5376),
        Shape::new(4096, 28672, 5376),
        Shape::new(4096, 5376, 14335),
        Shape::new(2_147_483_647, 1, 4),
        Shape::new(3, 2_147_483_647, 6),
    ]);
    out
}

/// Every selection of a loaded profile is valid and bit-exact.
fn check_selections(p: &Profile, grid: &[Shape]) {
    let arch = p.arch();
    assert_eq!(p.meta.entries, p.entries.len());
    let unique: HashSet<Problem> = p.entries.iter().map(|e| e.problem()).collect();
    assert_eq!(unique.len(), p.entries.len(), "duplicate problems loaded");
    for layout in [Layout::Tn, Layout::Nn] {
        for shape in grid {
            let problem = Problem::new(Dtype::Tf32, layout, *shape);
            let sel = p.select(&problem);
            let s = sel.schedule;
            assert!(s.dtype.has_kernels(), "{s} for {problem}");
            assert_eq!(s.dtype, Dtype::Tf32, "{s} for {problem}");
            assert!(!s.changes_reduction_order(), "{s} for {problem}");
            match sel.rule {
                Rule::Exact { entry } => {
                    assert_eq!(p.entries[entry].problem(), problem);
                    assert_eq!(space::check(arch, &s, shape), Ok(()), "{s} {shape}");
                }
                Rule::Nearest { entry, .. } => {
                    let e = &p.entries[entry];
                    assert_eq!(space::check(arch, &s, &e.shape()), Ok(()), "{s} {e:?}");
                }
                Rule::Model { candidates, .. } => {
                    assert!(candidates >= 1);
                    // Runs the shape: valid, or pruned from the search only as wasteful.
                    assert_eq!(space::runnable(arch, &s, shape), Ok(()), "{s} {shape}");
                    let held = p.entries.iter().any(|e| {
                        e.layout == layout
                            && (e.schedule == s.name() || e.runners_up.contains(&s.name()))
                    });
                    assert!(
                        held || s == Schedule::canonical(Dtype::Tf32),
                        "{s} for {problem} is not in the profile"
                    );
                }
                Rule::Canonical => assert_eq!(s, Schedule::canonical(Dtype::Tf32)),
            }
        }
    }
}

#[test]
fn mutated_profiles_fail_clearly_or_select_only_valid_bit_exact_schedules() {
    let start = std::time::Instant::now();
    let original = shipped();
    let baseline = Profile::parse(&original, NAME).expect("the shipped profile loads");
    let grid = shapes();
    check_selections(&baseline, &grid);
    let mut rng = Rng(SEED);
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    // FORGE_FUZZ_SHOW=1 prints a few refusals of each kind.
    let show = std::env::var_os("FORGE_FUZZ_SHOW").is_some();
    let (mut loaded, mut refused, mut changed_loaded) = (0, 0, 0);
    for case in 0..CASES {
        let mut bytes = original.clone().into_bytes();
        let mut kinds = vec![];
        for _ in 0..1 + usize::from(rng.below(4) == 0) {
            kinds.push(mutate(&mut rng, &mut bytes));
        }
        let result = Profile::parse_bytes(&bytes, NAME);
        let kind = kinds[0];
        let t = tally.entry(kind).or_default();
        match result {
            Err(e) => {
                refused += 1;
                t.1 += 1;
                let msg = e.to_string();
                if show && t.1 <= 3 {
                    eprintln!("[{kind}] {msg}");
                }
                assert!(
                    !msg.contains('\n') && !msg.contains('\r'),
                    "case {case} ({kinds:?}): not one line: {msg}"
                );
                assert!(
                    msg.contains(NAME),
                    "case {case} ({kinds:?}): no file: {msg}"
                );
                assert!(
                    msg.chars().count() <= 700,
                    "case {case} ({kinds:?}): {} characters: {msg}",
                    msg.chars().count()
                );
            }
            Ok(p) => {
                loaded += 1;
                t.0 += 1;
                if p.entries != baseline.entries {
                    changed_loaded += 1;
                }
                check_selections(&p, &grid);
            }
        }
    }
    let elapsed = start.elapsed();
    eprintln!(
        "{CASES} mutated profiles in {:.2} s: {loaded} loaded ({changed_loaded} with other \
         entries), {refused} refused",
        elapsed.as_secs_f64()
    );
    for (kind, (ok, err)) in &tally {
        eprintln!("  {kind:<24} {ok:>5} loaded {err:>5} refused");
    }
    assert_eq!(loaded + refused, CASES);
    // Both paths are exercised.
    assert!(loaded >= CASES / 20, "only {loaded} loaded");
    assert!(changed_loaded > 0);
    assert!(refused >= CASES / 2, "only {refused} refused");
}

/// The named reproducers of the issue, each refused with the file and the entry named.
#[test]
fn each_reproducer_is_refused_naming_the_entry() {
    let text = shipped();
    let first = "m = 128\nn = 5376\nk = 7168\n";
    let cases: Vec<(String, &str)> = vec![
        (
            text.replacen(first, "m = 0\nn = 5376\nk = 7168\n", 1),
            "entry 0 (tf32/tn/0x5376x7168): m = 0 is outside",
        ),
        (
            text.replacen(first, "m = 0\nn = 0\nk = 0\n", 1),
            "m = 0 is outside",
        ),
        (
            text.replacen(first, "m = 4294967295\nn = 5376\nk = 7168\n", 1),
            "m = 4294967295 is outside 1..=2147483647",
        ),
        (
            text.replacen(
                "wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k1\"\npredicted",
                "wgmma_tf32_128x64x32_s7_wg1_swz16c_np_c1_k2\"\npredicted",
                1,
            ),
            "splits K",
        ),
        (
            text.replace(
                "_s2_w8_swz1_np_c1_k1\"\ncublas",
                "_s2_w8_swz1_np_c1_k2\"\ncublas",
            ),
            "is not the canonical tf32 schedule",
        ),
        (
            text.replacen("dtype = \"tf32\"", "dtype = \"bf16\"", 1),
            "entry 0",
        ),
        (
            text.replacen("measured_us = 51.83466772238413", "measured_us = nan", 1),
            "measured_us = NaN is not a finite number > 0",
        ),
        (
            text.replacen(
                "ratio_vs_cublas = 1.0599238172591634",
                "ratio_vs_cublas = -1.0",
                1,
            ),
            "ratio_vs_cublas = -1 is not",
        ),
        (
            text.replacen(
                "    \"wgmma_tf32_128x64x32_s6_wg1_swz16c_np_c1_k1\",",
                "    \"wgmma_tf32_128x64x32_s6_wg1_swz16c_np_c1_k4\",",
                1,
            ),
            "runner-up 0",
        ),
        (
            text.replacen("gate = \"passed\"", "gate = \"passed\"\nnotes = \"x\"", 1),
            "unknown field `notes`",
        ),
        (
            text.replace("entries = 17", "entries = 16"),
            "says entries = 16 but holds 17",
        ),
        (
            text[..text.rfind("[[entry]]").unwrap()].to_string(),
            "says entries = 17 but holds 16",
        ),
        (
            text.replace("entries = 17\n", ""),
            "missing field `entries`",
        ),
        (
            text.replace(
                "numerical_contract = \"tf32-trunc-k8-inorder\"",
                "numerical_contract = \"fast\"",
            ),
            "unknown numerical contract 'fast'",
        ),
    ];
    for (text, needle) in cases {
        let err = Profile::parse(&text, NAME).unwrap_err().to_string();
        assert!(
            err.contains(NAME) && err.contains(needle),
            "`{needle}` not in: {err}"
        );
    }
    // A duplicate entry names both.
    let start = text.find("[[entry]]").unwrap();
    let end = start + 1 + text[start + 1..].find("[[entry]]").unwrap();
    let dup = format!(
        "{}\n{}",
        text.replace("entries = 17", "entries = 18"),
        &text[start..end]
    );
    let err = Profile::parse(&dup, NAME).unwrap_err().to_string();
    assert!(
        err.contains("entry 17 (tf32/tn/128x5376x7168): duplicates entry 0"),
        "{err}"
    );
    // Non-UTF-8: the byte's place.
    let mut bytes = text.clone().into_bytes();
    let at = text.find("NVIDIA H200").unwrap();
    bytes[at] = 0xff;
    let err = Profile::parse_bytes(&bytes, NAME).unwrap_err().to_string();
    assert!(err.contains("byte 0xff at line 4, column 16"), "{err}");
    // A 20,000-character line: a short message.
    let long = text.replacen(
        "device_name = \"NVIDIA H200\"",
        &format!("device_name = {}", "x".repeat(20_000)),
        1,
    );
    let err = Profile::parse(&long, NAME).unwrap_err().to_string();
    assert!(
        err.chars().count() < 600 && err.contains("line 4"),
        "{} chars: {err}",
        err.len()
    );
    let long_key = text.replacen("device_name", &"k".repeat(20_000), 1);
    let err = Profile::parse(&long_key, NAME).unwrap_err().to_string();
    assert!(err.chars().count() < 600, "{} chars", err.len());
}
