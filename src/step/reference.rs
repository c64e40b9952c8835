//! The step's math on the host (pure): an FP64 forward/backward/AdamW of the same model for
//! small shapes (the GPU test compares the device against it, the CPU tests check its
//! gradients by finite differences), and the column sums' f32 order of kernels/step.cu.

use crate::step::model::{AdamW, CHUNK_ROWS};

const GELU_K0: f64 = 0.797_884_560_802_865_4;
const GELU_K1: f64 = 0.044715;

pub fn gelu(a: f64) -> f64 {
    0.5 * a * (1.0 + (GELU_K0 * (a + GELU_K1 * a * a * a)).tanh())
}

pub fn gelu_grad(a: f64) -> f64 {
    let t = (GELU_K0 * (a + GELU_K1 * a * a * a)).tanh();
    0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * GELU_K0 * (1.0 + 3.0 * GELU_K1 * a * a)
}

/// The model's parameters in FP64, row-major as torch stores them.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub w1: Vec<f64>,
    pub b1: Vec<f64>,
    pub gamma: Vec<f64>,
    pub beta: Vec<f64>,
    pub w2: Vec<f64>,
    pub b2: Vec<f64>,
}

impl Params {
    fn tensors_mut(&mut self) -> [&mut Vec<f64>; 6] {
        [
            &mut self.w1,
            &mut self.b1,
            &mut self.gamma,
            &mut self.beta,
            &mut self.w2,
            &mut self.b2,
        ]
    }

    fn zeros_like(&self) -> Params {
        let z = |v: &Vec<f64>| vec![0.0; v.len()];
        Params {
            w1: z(&self.w1),
            b1: z(&self.b1),
            gamma: z(&self.gamma),
            beta: z(&self.beta),
            w2: z(&self.w2),
            b2: z(&self.b2),
        }
    }
}

/// Shapes of the host model.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub rows: usize,
    pub dim: usize,
    pub hidden: usize,
    pub groups: usize,
    pub eps: f64,
}

/// The loss (mean squared error) and every parameter's gradient.
pub fn loss_and_grads(p: &Params, x: &[f64], target: &[f64], dims: Dims) -> (f64, Params) {
    let Dims {
        rows,
        dim: d,
        hidden: h,
        groups,
        eps,
    } = dims;
    let width = h / groups;
    let count = (rows * d) as f64;
    let mut g = p.zeros_like();
    let mut loss = 0.0;
    for r in 0..rows {
        let xr = &x[r * d..(r + 1) * d];
        let z: Vec<f64> = (0..h)
            .map(|j| p.b1[j] + (0..d).map(|i| xr[i] * p.w1[j * d + i]).sum::<f64>())
            .collect();
        let mut xhat = vec![0.0; h];
        let mut rstd = vec![0.0; groups];
        for (grp, rs) in rstd.iter_mut().enumerate() {
            let c = &z[grp * width..(grp + 1) * width];
            let mean = c.iter().sum::<f64>() / width as f64;
            let var = c.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / width as f64;
            *rs = 1.0 / (var + eps).sqrt();
            for i in 0..width {
                xhat[grp * width + i] = (c[i] - mean) * *rs;
            }
        }
        let a: Vec<f64> = (0..h).map(|j| xhat[j] * p.gamma[j] + p.beta[j]).collect();
        let act: Vec<f64> = a.iter().map(|&v| gelu(v)).collect();
        let mut dact = vec![0.0; h];
        for o in 0..d {
            let y = p.b2[o] + (0..h).map(|j| act[j] * p.w2[o * h + j]).sum::<f64>();
            let diff = y - target[r * d + o];
            loss += diff * diff / count;
            let dy = 2.0 * diff / count;
            g.b2[o] += dy;
            for j in 0..h {
                g.w2[o * h + j] += dy * act[j];
                dact[j] += dy * p.w2[o * h + j];
            }
        }
        let da: Vec<f64> = (0..h).map(|j| dact[j] * gelu_grad(a[j])).collect();
        for j in 0..h {
            g.beta[j] += da[j];
            g.gamma[j] += da[j] * xhat[j];
        }
        for (grp, rs) in rstd.iter().enumerate() {
            let idx = grp * width..(grp + 1) * width;
            let dn: Vec<f64> = idx.clone().map(|j| da[j] * p.gamma[j]).collect();
            let m1 = dn.iter().sum::<f64>() / width as f64;
            let m2 = idx.clone().zip(&dn).map(|(j, v)| v * xhat[j]).sum::<f64>() / width as f64;
            for (i, j) in idx.enumerate() {
                let dz = rs * (dn[i] - m1 - xhat[j] * m2);
                g.b1[j] += dz;
                for (w, xk) in g.w1[j * d..(j + 1) * d].iter_mut().zip(xr) {
                    *w += dz * xk;
                }
            }
        }
    }
    (loss, g)
}

/// AdamW's moments and step count.
#[derive(Clone, Debug)]
pub struct AdamState {
    pub m: Params,
    pub v: Params,
    pub t: i32,
}

impl AdamState {
    pub fn new(p: &Params) -> AdamState {
        AdamState {
            m: p.zeros_like(),
            v: p.zeros_like(),
            t: 0,
        }
    }
}

/// One torch.optim.AdamW update (decoupled decay, then the bias-corrected step).
pub fn adamw(p: &mut Params, g: &Params, s: &mut AdamState, opt: &AdamW) {
    s.t += 1;
    let (lr, b1, b2) = (opt.lr as f64, opt.beta1, opt.beta2);
    let (eps, wd) = (opt.eps as f64, opt.weight_decay as f64);
    let bc1 = 1.0 - b1.powi(s.t);
    let bc2 = 1.0 - b2.powi(s.t);
    let mut g = g.clone();
    let grads = g.tensors_mut();
    let ms = s.m.tensors_mut();
    let vs = s.v.tensors_mut();
    for (((pt, gt), mt), vt) in p.tensors_mut().into_iter().zip(grads).zip(ms).zip(vs) {
        for i in 0..pt.len() {
            mt[i] = b1 * mt[i] + (1.0 - b1) * gt[i];
            vt[i] = b2 * vt[i] + (1.0 - b2) * gt[i] * gt[i];
            let denom = vt[i].sqrt() / bc2.sqrt() + eps;
            pt[i] = pt[i] * (1.0 - lr * wd) - lr / bc1 * mt[i] / denom;
        }
    }
}

/// Column sums in the device's f32 order (`step_colsum_partial` + `step_colsum_fold`):
/// chunks of [`CHUNK_ROWS`] rows summed in row order, folded into `acc` in chunk order.
pub fn column_sum_f32(x: &[f32], rows: usize, cols: usize, acc: &mut [f32], accumulate: bool) {
    let chunks = rows.div_ceil(CHUNK_ROWS);
    for (col, a) in acc.iter_mut().enumerate().take(cols) {
        let mut s = if accumulate { *a } else { 0.0 };
        for c in 0..chunks {
            let mut part = 0.0f32;
            for r in c * CHUNK_ROWS..rows.min((c + 1) * CHUNK_ROWS) {
                part += x[r * cols + col];
            }
            s += part;
        }
        *a = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::input_value;

    fn dims() -> Dims {
        Dims {
            rows: 3,
            dim: 4,
            hidden: 8,
            groups: 2,
            eps: 1e-5,
        }
    }

    fn values(tensor: u64, n: usize, scale: f64) -> Vec<f64> {
        (0..n as u64)
            .map(|i| input_value(5, 0, tensor, i) as f64 * scale)
            .collect()
    }

    fn params(d: Dims) -> Params {
        Params {
            w1: values(1, d.hidden * d.dim, 0.5),
            b1: values(2, d.hidden, 0.5),
            gamma: values(3, d.hidden, 0.3).iter().map(|v| 1.0 + v).collect(),
            beta: values(4, d.hidden, 0.3),
            w2: values(5, d.dim * d.hidden, 0.35),
            b2: values(6, d.dim, 0.35),
        }
    }

    #[test]
    fn gelu_grad_is_the_derivative_of_gelu() {
        for a in [-3.0, -0.7, 0.0, 0.4, 2.5] {
            let fd = (gelu(a + 1e-6) - gelu(a - 1e-6)) / 2e-6;
            assert!(
                (fd - gelu_grad(a)).abs() < 1e-8,
                "{a}: {fd} vs {}",
                gelu_grad(a)
            );
        }
    }

    #[test]
    fn every_gradient_matches_finite_differences() {
        let d = dims();
        let p = params(d);
        let x = values(7, d.rows * d.dim, 1.0);
        let t = values(8, d.rows * d.dim, 1.0);
        let (_, g) = loss_and_grads(&p, &x, &t, d);
        let mut g = g;
        let grads: Vec<Vec<f64>> = g.tensors_mut().iter().map(|v| v.to_vec()).collect();
        for (which, grad) in grads.iter().enumerate() {
            for (i, &analytic) in grad.iter().enumerate() {
                let mut plus = p.clone();
                let mut minus = p.clone();
                plus.tensors_mut()[which][i] += 1e-6;
                minus.tensors_mut()[which][i] -= 1e-6;
                let fd = (loss_and_grads(&plus, &x, &t, d).0 - loss_and_grads(&minus, &x, &t, d).0)
                    / 2e-6;
                assert!(
                    (fd - analytic).abs() < 1e-7 + 1e-5 * fd.abs(),
                    "tensor {which} [{i}]: finite difference {fd}, gradient {analytic}"
                );
            }
        }
    }

    #[test]
    fn adamw_lowers_the_loss_of_the_host_model() {
        let d = dims();
        let mut p = params(d);
        let x = values(7, d.rows * d.dim, 1.0);
        let t = values(8, d.rows * d.dim, 1.0);
        let mut s = AdamState::new(&p);
        let opt = AdamW {
            lr: 1e-2,
            ..AdamW::default()
        };
        let first = loss_and_grads(&p, &x, &t, d).0;
        for _ in 0..20 {
            let (_, g) = loss_and_grads(&p, &x, &t, d);
            adamw(&mut p, &g, &mut s, &opt);
        }
        let last = loss_and_grads(&p, &x, &t, d).0;
        assert!(last < 0.8 * first, "{first} -> {last}");
    }

    #[test]
    fn chunk_aligned_micro_batches_continue_the_whole_batch_fold() {
        let (rows, cols) = (4 * CHUNK_ROWS, 64);
        let x: Vec<f32> = (0..(rows * cols) as u64)
            .map(|i| input_value(9, 0, 1, i) * 1e3)
            .collect();
        let mut whole = vec![0.0f32; cols];
        column_sum_f32(&x, rows, cols, &mut whole, false);
        // Two micro-batches of two chunks each, folded into the same accumulator.
        let half = rows / 2;
        let mut micro = vec![0.0f32; cols];
        column_sum_f32(&x[..half * cols], half, cols, &mut micro, false);
        column_sum_f32(&x[half * cols..], half, cols, &mut micro, true);
        assert_eq!(
            whole.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            micro.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        // Summing each micro-batch separately and adding the two sums changes the bits:
        // the association differs, so the fold (not a sum of sums) is what keeps them.
        let (mut a, mut b) = (vec![0.0f32; cols], vec![0.0f32; cols]);
        column_sum_f32(&x[..half * cols], half, cols, &mut a, false);
        column_sum_f32(&x[half * cols..], half, cols, &mut b, false);
        let summed: Vec<f32> = a.iter().zip(&b).map(|(p, q)| p + q).collect();
        assert_ne!(summed, whole);
    }
}
