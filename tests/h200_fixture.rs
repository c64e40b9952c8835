//! Outputs computed on an H200 (tests/fixtures/h200/, made by tests/device/contract_suite.sh:
//! `forge launch … --seed 7`, each a wgmma or mma_sync schedule whose bits equalled the
//! canonical output written there) checked on this machine by `forge verify-bits` against the
//! CPU bit model of the tensor cores, under the contract each was computed with. The inputs
//! are regenerated from the seed by the same generator the device used (`reference`).

use forge::reference::{TENSOR_A, TENSOR_B, input_value};
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 7;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h200")
        .join(name)
}

fn write_operand(path: &Path, tensor: u64, len: u64) {
    let bytes: Vec<u8> = (0..len)
        .flat_map(|i| input_value(SEED, 0, tensor, i).to_le_bytes())
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// Runs verify-bits on the fixture of `contract` and `shape` with `checked_as` as the contract
/// the file is checked under.
fn verify(contract: &str, shape: (u64, u64, u64), checked_as: &str) -> (bool, String) {
    let (m, n, k) = shape;
    let dir = std::env::temp_dir().join(format!(
        "forge-h200-{}-{contract}-{checked_as}-{m}x{n}x{k}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.f32"), dir.join("b.f32"));
    write_operand(&a, TENSOR_A, m * k);
    write_operand(&b, TENSOR_B, n * k);
    let c = fixture(&format!("h200_{contract}_{m}x{n}x{k}.c.f32"));
    let o = Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(["verify-bits", "--a"])
        .arg(&a)
        .arg("--b")
        .arg(&b)
        .arg("--c")
        .arg(&c)
        .args(["--shape", &format!("{m}x{n}x{k}"), "--contract", checked_as])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.success(), text)
}

#[test]
fn h200_outputs_equal_the_bit_model_element_for_element() {
    for (contract, shape) in [
        ("tf32-rne-k8-inorder", (96, 80, 100)),
        ("tf32-trunc-k8-inorder", (96, 80, 100)),
        ("tf32-rne-k8-inorder", (64, 48, 37)),
    ] {
        let (ok, text) = verify(contract, shape, contract);
        assert!(ok, "{contract} {shape:?}: {text}");
        let all = shape.0 * shape.1;
        assert!(text.contains(&format!("{all} of {all} checked")), "{text}");
    }
}

#[test]
fn the_check_tells_the_contracts_apart() {
    // The RNE output is not what the model predicts for truncated inputs, and vice versa.
    for (contract, other) in [
        ("tf32-rne-k8-inorder", "tf32-trunc-k8-inorder"),
        ("tf32-trunc-k8-inorder", "tf32-rne-k8-inorder"),
    ] {
        let (ok, text) = verify(contract, (96, 80, 100), other);
        assert!(!ok, "{contract} checked as {other} passed: {text}");
    }
}
