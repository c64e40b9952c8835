//! GEMM problem shapes and their textual forms (`D2048`, `MxNxK`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Largest accepted dimension: kernels index with 32-bit signed integers.
pub const MAX_DIM: u64 = (1u64 << 31) - 1;

/// One GEMM problem C[M×N] = A[M×K] · B[N×K]ᵀ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShapeError {
    #[error("empty shape list: give at least one shape such as D2048 or 128x21504x5376")]
    Empty,
    #[error(
        "shape `{0}` is not of the form D<size> or MxNxK (for example D2048 or 128x21504x5376)"
    )]
    Syntax(String),
    #[error("shape `{text}`: dimension {dim} must be at least 1")]
    Zero { text: String, dim: &'static str },
    #[error("shape `{text}`: dimension {dim} = {value} exceeds 2^31 - 1")]
    TooLarge {
        text: String,
        dim: &'static str,
        value: u64,
    },
}

impl Shape {
    pub const fn new(m: u32, n: u32, k: u32) -> Self {
        Shape { m, n, k }
    }

    /// Floating-point operations of the product (two per multiply-add).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Parses a comma-separated list such as `D2048,D4096,128x21504x5376`.
    pub fn parse_list(text: &str) -> Result<Vec<Shape>, ShapeError> {
        let parts: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return Err(ShapeError::Empty);
        }
        parts.into_iter().map(str::parse).collect()
    }
}

fn parse_dim(text: &str, part: &str, dim: &'static str) -> Result<u32, ShapeError> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ShapeError::Syntax(text.to_string()));
    }
    let value: u64 = part.parse().map_err(|_| ShapeError::TooLarge {
        text: text.to_string(),
        dim,
        value: u64::MAX,
    })?;
    if value == 0 {
        return Err(ShapeError::Zero {
            text: text.to_string(),
            dim,
        });
    }
    if value > MAX_DIM {
        return Err(ShapeError::TooLarge {
            text: text.to_string(),
            dim,
            value,
        });
    }
    Ok(value as u32)
}

impl FromStr for Shape {
    type Err = ShapeError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let text = raw.trim();
        if let Some(size) = text.strip_prefix(['D', 'd']) {
            let d = parse_dim(text, size, "D")?;
            return Ok(Shape::new(d, d, d));
        }
        let parts: Vec<&str> = text.split(['x', 'X']).collect();
        if parts.len() != 3 {
            return Err(ShapeError::Syntax(text.to_string()));
        }
        Ok(Shape::new(
            parse_dim(text, parts[0], "M")?,
            parse_dim(text, parts[1], "N")?,
            parse_dim(text, parts[2], "K")?,
        ))
    }
}

/// A comma-separated list of shapes as the command line takes it (`D2048,128x21504x5376`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeList(pub Vec<Shape>);

impl FromStr for ShapeList {
    type Err = ShapeError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Shape::parse_list(text).map(ShapeList)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_square_and_general_forms() {
        assert_eq!("D2048".parse(), Ok(Shape::new(2048, 2048, 2048)));
        assert_eq!("128x21504x5376".parse(), Ok(Shape::new(128, 21504, 5376)));
        assert_eq!(
            Shape::parse_list("D512, 1x2x3").unwrap(),
            vec![Shape::new(512, 512, 512), Shape::new(1, 2, 3)]
        );
    }

    #[test]
    fn rejects_bad_shapes_with_the_reason() {
        assert!(matches!(
            "D0".parse::<Shape>(),
            Err(ShapeError::Zero { .. })
        ));
        assert!(matches!(
            "12x34".parse::<Shape>(),
            Err(ShapeError::Syntax(_))
        ));
        assert!(matches!(
            "-5x1x1".parse::<Shape>(),
            Err(ShapeError::Syntax(_))
        ));
        assert!(matches!(
            "2147483648x1x1".parse::<Shape>(),
            Err(ShapeError::TooLarge { .. })
        ));
        assert!(matches!(
            "99999999999999999999999x1x1".parse::<Shape>(),
            Err(ShapeError::TooLarge { .. })
        ));
        assert_eq!(Shape::parse_list(" , "), Err(ShapeError::Empty));
        assert!("2147483647x1x1".parse::<Shape>().is_ok());
    }
}
