//! Which operands a GEMM must prepare before its kernel can read them, and how (pure; the
//! kernel is `kernels/operand_prep.cu`, its launcher `device::prep`).
//!
//! forge's kernels read A (M×K) and B (N×K) K-major. An operand stored K×rows (the `nn`, `tt`,
//! `nt` layouts) is transposed into a workspace first; an operand a TMA tensor map cannot
//! address in place (the wgmma family needs 16-byte row strides and a 16-byte aligned base:
//! K % 4 ≠ 0 or an unaligned pointer) is copied with its row stride padded to a multiple of 4
//! floats. Either way the kernel then reads exactly the values of the explicitly transposed
//! operand, so the product is bit-identical to the TN product of those operands.

use crate::schedule::{Family, Layout, Schedule};
use crate::shape::Shape;

/// One operand's preparation pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OperandPrep {
    /// The operand is stored K × rows (transposed), not rows × K.
    pub transpose: bool,
    /// Rows of the K-major result (M for A, N for B).
    pub rows: u32,
    /// K.
    pub k: u32,
    /// Row stride of the stored operand, floats.
    pub ld_in: u32,
    /// Row stride of the K-major workspace, floats (≥ K; a multiple of 4 for TMA).
    pub ld_out: u32,
}

impl OperandPrep {
    /// f32 words of workspace.
    pub fn workspace_words(&self) -> u64 {
        self.rows as u64 * self.ld_out as u64
    }

    /// Bytes the pass reads and writes (for the cost model and bandwidth reports).
    pub fn bytes_moved(&self) -> u64 {
        4 * (self.rows as u64 * self.k as u64 + self.workspace_words())
    }
}

/// The preparation of A and of B (None: the kernel reads the stored operand in place).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PrepPlan {
    pub a: Option<OperandPrep>,
    pub b: Option<OperandPrep>,
}

impl PrepPlan {
    /// What a `schedule` needs for `layout` and `shape` with operand base pointers `a`, `b`
    /// (only their 16-byte alignment matters; pass 0 to assume aligned bases).
    pub fn new(schedule: &Schedule, layout: Layout, shape: &Shape, a: u64, b: u64) -> PrepPlan {
        let (ta, tb) = layout.transposes();
        PrepPlan {
            a: operand(schedule.family, ta, shape.m, shape.k, a),
            b: operand(schedule.family, tb, shape.n, shape.k, b),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_none() && self.b.is_none()
    }

    /// Bytes both passes read and write.
    pub fn bytes_moved(&self) -> u64 {
        [self.a, self.b]
            .iter()
            .flatten()
            .map(OperandPrep::bytes_moved)
            .sum()
    }

    /// Number of passes (operands prepared; both run in one launch).
    pub fn passes(&self) -> u32 {
        self.a.is_some() as u32 + self.b.is_some() as u32
    }
}

/// Row stride the wgmma family's tensor maps need: K rounded up to 4 floats (16 bytes).
pub fn tma_row_stride(k: u32) -> u32 {
    k.div_ceil(4) * 4
}

fn operand(family: Family, transposed: bool, rows: u32, k: u32, ptr: u64) -> Option<OperandPrep> {
    let aligned_rows = k.is_multiple_of(4);
    let aligned_base = ptr.is_multiple_of(16);
    // mma_sync reads rows of stride K (16-byte cp.async when K % 4 == 0, else 4-byte); wgmma
    // reads through tensor maps, which take a padded stride.
    let (direct, ld_out) = match family {
        Family::MmaSync => (aligned_base || !aligned_rows, k),
        Family::Wgmma => (aligned_base && aligned_rows, tma_row_stride(k)),
    };
    if direct && !transposed {
        return None;
    }
    Some(OperandPrep {
        transpose: transposed,
        rows,
        k,
        ld_in: if transposed { rows } else { k },
        ld_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(name: &str) -> Schedule {
        name.parse().unwrap()
    }

    #[test]
    fn tn_aligned_needs_nothing() {
        let s = Shape::new(256, 512, 1024);
        for name in [
            "wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1",
            "mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1",
        ] {
            assert!(PrepPlan::new(&sched(name), Layout::Tn, &s, 0, 256).is_empty());
        }
    }

    #[test]
    fn wgmma_pads_ragged_k_and_unaligned_bases() {
        let w = sched("wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1");
        let p = PrepPlan::new(&w, Layout::Tn, &Shape::new(257, 513, 1025), 0, 0);
        let a = p.a.unwrap();
        assert_eq!(
            (a.transpose, a.rows, a.ld_in, a.ld_out),
            (false, 257, 1025, 1028)
        );
        assert_eq!(p.b.unwrap().rows, 513);
        let p = PrepPlan::new(&w, Layout::Tn, &Shape::new(64, 64, 64), 4, 0);
        assert!(p.a.is_some() && p.b.is_none());
        // mma_sync reads ragged K in place, and an unaligned base when K % 4 ≠ 0.
        let c = sched("mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1");
        assert!(PrepPlan::new(&c, Layout::Tn, &Shape::new(257, 513, 1025), 4, 4).is_empty());
        let p = PrepPlan::new(&c, Layout::Tn, &Shape::new(64, 64, 64), 4, 0);
        assert_eq!(p.a.unwrap().ld_out, 64);
    }

    #[test]
    fn transposed_layouts_transpose_their_operands() {
        let c = sched("mma_sync_tf32_128x128x32_s2_w8_swz1_np_c1_k1");
        let shape = Shape::new(100, 200, 301);
        let nn = PrepPlan::new(&c, Layout::Nn, &shape, 0, 0);
        assert!(nn.a.is_none());
        let b = nn.b.unwrap();
        assert_eq!(
            (b.transpose, b.rows, b.ld_in, b.ld_out),
            (true, 200, 200, 301)
        );
        let tt = PrepPlan::new(&c, Layout::Tt, &shape, 0, 0);
        assert!(tt.a.unwrap().transpose && tt.b.is_none());
        let w = sched("wgmma_tf32_128x256x32_s4_wg2_swz8_pers_c1_k1");
        let nt = PrepPlan::new(&w, Layout::Nt, &shape, 0, 0);
        assert_eq!(nt.passes(), 2);
        assert_eq!(nt.a.unwrap().ld_out, 304);
        assert_eq!(
            nt.bytes_moved(),
            4 * (100 * 301 + 100 * 304 + 200 * 301 + 200 * 304)
        );
    }
}
