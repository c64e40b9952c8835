//! One GEMM problem as the tuner, its worker, reports and profiles name it: element type,
//! operand layout and shape.

use crate::schedule::{Dtype, Layout};
use crate::shape::Shape;
use serde::{Deserialize, Serialize};
use std::fmt;

/// C[M×N] = op(A) · op(B) for one dtype and operand layout (`tf32/tn/2048x2048x2048`).
///
/// Serialized flat (`shape`, `dtype`, `layout` side by side), as reports have always stored it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Problem {
    pub shape: Shape,
    pub dtype: Dtype,
    pub layout: Layout,
}

impl Problem {
    pub const fn new(dtype: Dtype, layout: Layout, shape: Shape) -> Problem {
        Problem {
            shape,
            dtype,
            layout,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.dtype, self.layout.as_str(), self.shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_dtype_layout_and_shape() {
        let p = Problem::new(Dtype::Tf32, Layout::Nn, Shape::new(128, 256, 512));
        assert_eq!(p.to_string(), "tf32/nn/128x256x512");
    }
}
