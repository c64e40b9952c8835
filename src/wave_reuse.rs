//! The operands' DRAM reads of one launch, walked tile by tile in the kernel's visit order
//! (session 28 hypothesis, `wave_reuse_capacity_fraction` in cost_model/model.toml).
//!
//! The resident CTAs run their tiles in step: tile `t` of the launch order runs in wave
//! `t / slots`. Two readers of one operand panel (A's tile row or B's tile column of one K
//! split) in the same wave read it at about the same time; in different waves they read it a
//! whole number of waves apart, and between the two reads the L2 takes in the distinct panels
//! of both waves (half of each: the panel's K slices are read as the K loop goes) and of every
//! wave between them, plus their C tiles. A re-read after `d` such bytes misses the L2 with
//! probability `1 − exp(−(d/D)^p)`, `D` a share of the L2 (LRU-like, soft because of the
//! slices' hashing and the two partitions). A re-read inside one wave misses with
//! `loss · log2(launch distance to the panel's previous reader)`: readers far apart in launch
//! order run on SMs that drift apart in time.
//!
//! Fitted to Nsight Compute's `dram__bytes_read` of 47 wgmma kernels on an H100 (five shapes,
//! every visit group 1–16 row and column at two of them; reports/2026-12-06-h100-session27/):
//! log(priced/read) rms 0.21 against 0.78 for the band model (`D` 0.9 × L2, `p` 4, loss 0.01);
//! over all 81 kernels with stored DRAM reads (sessions 21–27), 0.19 against 0.69
//! (cost_model/dram_accuracy.py).

use std::cell::RefCell;
use std::collections::HashMap;

/// One launch's grid and bytes, as [`operand_dram_bytes`] walks it.
#[derive(Clone, Copy, Debug)]
pub struct Launch {
    pub tiles_m: u64,
    pub tiles_n: u64,
    /// K splits: work unit `u` is split `u / tiles` of tile `u % tiles`.
    pub splits: u64,
    pub group: u64,
    pub raster_n: bool,
    /// Tiles running at once (CTAs resident on the whole GPU).
    pub slots: u64,
    /// Bytes of one A panel (a tile row over one split's K) and one B panel.
    pub a_panel_bytes: f64,
    pub b_panel_bytes: f64,
    /// Bytes one unit writes (its C tile or partial).
    pub c_tile_bytes: f64,
}

/// The model's constants: `D` in bytes, the exponent `p`, the in-wave loss per doubling.
#[derive(Clone, Copy, Debug)]
pub struct Reuse {
    pub capacity_bytes: f64,
    pub exponent: f64,
    pub loss_per_doubling: f64,
}

impl Reuse {
    fn miss_after(&self, bytes: f64) -> f64 {
        1.0 - (-(bytes / self.capacity_bytes.max(1.0)).powf(self.exponent)).exp()
    }
    fn miss_in_wave(&self, distance: usize) -> f64 {
        if distance <= 1 {
            0.0
        } else {
            (self.loss_per_doubling * (distance as f64).log2()).min(1.0)
        }
    }
}

/// One operand's panels in the walk: the bytes of each and who read it last.
struct Panels {
    bytes: f64,
    /// Per panel: the wave and the launch position of its last reader (`usize::MAX`: none).
    last: Vec<(usize, usize)>,
}

impl Panels {
    fn new(count: u64, bytes: f64) -> Panels {
        Panels {
            bytes,
            last: vec![(usize::MAX, 0); count as usize],
        }
    }
}

/// DRAM bytes the operands' panels cost over the launch (C's writes not included). Walks
/// every work unit twice; schedules that differ only in what the walk does not see (stages,
/// persistence, workers) share one walk through a per-thread memo.
pub fn operand_dram_bytes(l: &Launch, r: &Reuse) -> f64 {
    type Key = [u64; 12];
    thread_local! {
        static MEMO: RefCell<HashMap<Key, f64>> = RefCell::new(HashMap::new());
    }
    let key: Key = [
        l.tiles_m,
        l.tiles_n,
        l.splits,
        l.group,
        l.raster_n as u64,
        l.slots,
        l.a_panel_bytes.to_bits(),
        l.b_panel_bytes.to_bits(),
        l.c_tile_bytes.to_bits(),
        r.capacity_bytes.to_bits(),
        r.exponent.to_bits(),
        r.loss_per_doubling.to_bits(),
    ];
    if let Some(bytes) = MEMO.with(|m| m.borrow().get(&key).copied()) {
        return bytes;
    }
    let bytes = walk(l, r);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 1 << 16 {
            m.clear();
        }
        m.insert(key, bytes);
    });
    bytes
}

/// The work units' panels in launch order (kernels/common.cuh `forge_swizzle`: row raster =
/// bands of `group` tile rows walked along N, column raster the transpose), without a
/// division per unit: (A panel, B panel) of unit `u` = split `u / tiles`, tile `u % tiles`.
struct Walk<'a> {
    l: &'a Launch,
    split: u64,
    /// Inside the current band: its first banded index, its size, the banded offset and the
    /// walked index.
    first: u64,
    size: u64,
    offset: u64,
    walked: u64,
}

impl<'a> Walk<'a> {
    fn new(l: &'a Launch) -> Walk<'a> {
        let mut w = Walk {
            l,
            split: 0,
            first: 0,
            size: 0,
            offset: 0,
            walked: 0,
        };
        w.size = w.major().min(l.group.max(1));
        w
    }
    fn major(&self) -> u64 {
        if self.l.raster_n {
            self.l.tiles_m
        } else {
            self.l.tiles_n
        }
    }
    fn minor(&self) -> u64 {
        if self.l.raster_n {
            self.l.tiles_n
        } else {
            self.l.tiles_m
        }
    }
}

impl Iterator for Walk<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        if self.split >= self.l.splits.max(1) {
            return None;
        }
        let (a, b) = (self.first + self.offset, self.walked);
        let (i, j) = if self.l.raster_n { (a, b) } else { (b, a) };
        let item = (
            (self.split * self.l.tiles_m + i) as usize,
            (self.split * self.l.tiles_n + j) as usize,
        );
        self.offset += 1;
        if self.offset == self.size {
            self.offset = 0;
            self.walked += 1;
            if self.walked == self.minor() {
                self.walked = 0;
                self.first += self.size;
                if self.first >= self.major() {
                    self.first = 0;
                    self.split += 1;
                }
                self.size = (self.major() - self.first).min(self.l.group.max(1));
            }
        }
        Some(item)
    }
}

fn walk(l: &Launch, r: &Reuse) -> f64 {
    let tiles = (l.tiles_m * l.tiles_n).max(1);
    let units = tiles * l.splits.max(1);
    let slots = l.slots.clamp(1, units) as usize;
    let waves = units.div_ceil(slots as u64) as usize;
    let mut a = Panels::new(l.tiles_m * l.splits.max(1), l.a_panel_bytes);
    let mut b = Panels::new(l.tiles_n * l.splits.max(1), l.b_panel_bytes);
    // First walk: the distinct panel bytes and C bytes of each wave.
    let mut wave_bytes = vec![0.0; waves];
    for (u, (i, j)) in Walk::new(l).enumerate() {
        let w = u / slots;
        for (p, x) in [(&mut a, i), (&mut b, j)] {
            if p.last[x].0 != w {
                p.last[x].0 = w;
                wave_bytes[w] += p.bytes;
            }
        }
        wave_bytes[w] += l.c_tile_bytes;
    }
    // Bytes of the waves before each wave, to sum the waves between two reads.
    let mut before = Vec::with_capacity(waves + 1);
    before.push(0.0);
    for (w, bytes) in wave_bytes.iter().enumerate() {
        before.push(before[w] + bytes);
    }
    a.last.fill((usize::MAX, 0));
    b.last.fill((usize::MAX, 0));
    let mut total = 0.0;
    for (u, (i, j)) in Walk::new(l).enumerate() {
        let w = u / slots;
        for (p, x) in [(&mut a, i), (&mut b, j)] {
            let (lw, lu) = p.last[x];
            let miss = if lw == usize::MAX {
                1.0
            } else if lw == w {
                r.miss_in_wave(u - lu)
            } else {
                let between = before[w] - before[lw + 1];
                r.miss_after(0.5 * (wave_bytes[lw] + wave_bytes[w]) + between)
            };
            total += miss * p.bytes;
            p.last[x] = (w, u);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's visit order (kernels/common.cuh `forge_swizzle`): tile `t` → (tile row, tile
    /// column). `raster_n`: bands of `group` tile rows walked along N; else bands of `group` tile
    /// columns walked along M.
    fn tile_at(t: u64, tiles_m: u64, tiles_n: u64, group: u64, raster_n: bool) -> (u64, u64) {
        let group = group.max(1);
        let (major, minor) = if raster_n {
            (tiles_m, tiles_n)
        } else {
            (tiles_n, tiles_m)
        };
        let band = group * minor;
        let first = (t / band) * group;
        let size = (major - first).min(group);
        let r = t % band;
        let (a, b) = (first + r % size, r / size);
        if raster_n { (a, b) } else { (b, a) }
    }

    const H100: Reuse = Reuse {
        capacity_bytes: 0.9 * 52_428_800.0,
        exponent: 4.0,
        loss_per_doubling: 0.01,
    };

    fn launch(m: u64, n: u64, k: u64, bm: u64, bn: u64, group: u64, raster_n: bool) -> Launch {
        Launch {
            tiles_m: m.div_ceil(bm),
            tiles_n: n.div_ceil(bn),
            splits: 1,
            group,
            raster_n,
            slots: 132,
            a_panel_bytes: (bm * k * 4) as f64,
            b_panel_bytes: (bn * k * 4) as f64,
            c_tile_bytes: (bm * bn * 4) as f64,
        }
    }

    #[test]
    fn the_walk_visits_every_tile_once_in_each_order() {
        for (tm, tn, g, rn) in [
            (7, 5, 3, true),
            (7, 5, 3, false),
            (4, 9, 16, true),
            (1, 1, 1, false),
        ] {
            let mut seen = vec![false; (tm * tn) as usize];
            for t in 0..tm * tn {
                let (i, j) = tile_at(t, tm, tn, g, rn);
                assert!(i < tm && j < tn, "({i}, {j}) outside {tm}x{tn}");
                assert!(!std::mem::replace(&mut seen[(i * tn + j) as usize], true));
            }
        }
        for (tm, tn, g, rn, splits) in
            [(7, 5, 3, true, 2), (7, 5, 3, false, 1), (4, 9, 16, true, 3)]
        {
            let l = Launch {
                splits,
                group: g,
                raster_n: rn,
                ..launch(tm * 128, tn * 128, 64, 128, 128, g, rn)
            };
            let walked: Vec<_> = Walk::new(&l).collect();
            let tiles = tm * tn;
            let direct: Vec<_> = (0..tiles * splits)
                .map(|u| {
                    let (i, j) = tile_at(u % tiles, tm, tn, g, rn);
                    ((u / tiles * tm + i) as usize, (u / tiles * tn + j) as usize)
                })
                .collect();
            assert_eq!(
                walked, direct,
                "{tm}x{tn} group {g} raster_n {rn} splits {splits}"
            );
        }
        // Row raster, group 2: down the band's two rows, then the next column.
        assert_eq!(tile_at(1, 4, 4, 2, true), (1, 0));
        assert_eq!(tile_at(2, 4, 4, 2, true), (0, 1));
        assert_eq!(tile_at(8, 4, 4, 2, true), (2, 0));
    }

    #[test]
    fn one_wave_reads_each_operand_once() {
        // 8 × 8 tiles in one 132-slot wave: B's readers adjacent (read once), A's 8 apart
        // (each of the 7 later readers misses 0.01 × log2 8).
        let l = launch(1024, 1024, 512, 128, 128, 8, true);
        let operand = 1024.0 * 512.0 * 4.0;
        let bytes = operand_dram_bytes(&l, &H100);
        let expected = operand + operand * (1.0 + 7.0 * 0.03);
        assert!(
            (bytes / expected - 1.0).abs() < 1e-9,
            "{bytes} against {expected}"
        );
    }

    #[test]
    fn a_wave_footprint_past_the_l2_rereads_the_streamed_operand() {
        // 6656×4992×1536, 128×200, row raster group 1: every wave reads all of B (31 MB) and
        // its C tiles; the next wave's reads of B mostly miss (measured 407 MB on the H100,
        // 372 at group 4, 230 at group 16).
        let g1 = operand_dram_bytes(&launch(6656, 4992, 1536, 128, 200, 1, true), &H100);
        let g16 = operand_dram_bytes(&launch(6656, 4992, 1536, 128, 200, 16, true), &H100);
        assert!(g1 > 300e6 && g1 < 450e6, "{g1}");
        assert!(g16 > 180e6 && g16 < 280e6, "{g16}");
    }

    #[test]
    fn a_small_k_grid_keeps_its_operands_when_the_waves_fit() {
        // 13680×7872×296, 128×248, row group 4 (measured 68 MB) against column group 1 (194):
        // the column walk's wave holds all of A (16 MB) and C, so A's re-reads miss more.
        let row4 = operand_dram_bytes(&launch(13680, 7872, 296, 128, 248, 4, true), &H100);
        let col1 = operand_dram_bytes(&launch(13680, 7872, 296, 128, 248, 1, false), &H100);
        assert!(row4 < 90e6, "{row4}");
        assert!(col1 > 1.5 * row4, "{col1} against {row4}");
    }
}
