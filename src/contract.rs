//! The numerical contract of the TF32 kernels: how A and B become TF32 and in which order the
//! products are added (`kernels/ABI.md`, "Numerics"). Pure: no device code, no CLI types.
//!
//! Every kernel of one [`Contract`] produces the same bits for every schedule (tile, stages,
//! warps, raster, persistence, cluster, instruction family); two contracts differ in the bits.
//! The contract's [`Contract::name`] is what profiles record.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How each f32 element of A and B is reduced to TF32 (19 bits) before the tensor core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Rounding {
    /// The raw f32 bits go to the tensor core, which ignores the low 13 mantissa bits
    /// (round toward zero). `FORGE_ROUND 0`.
    #[serde(rename = "trunc")]
    Truncate,
    /// Every element is rounded to the nearest TF32, ties to even (`cvt.rn.tf32.f32`;
    /// NaN stays NaN, ±Inf stays ±Inf, finite values past the TF32 range become ±Inf,
    /// zeros stay zeros). `FORGE_ROUND 1`.
    #[serde(rename = "rne")]
    NearestEven,
}

impl Rounding {
    pub const ALL: [Rounding; 2] = [Rounding::Truncate, Rounding::NearestEven];

    /// The token used in contract names and serialized forms: `trunc`, `rne`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rounding::Truncate => "trunc",
            Rounding::NearestEven => "rne",
        }
    }

    /// The value of the `FORGE_ROUND` define.
    pub fn define(self) -> u8 {
        match self {
            Rounding::Truncate => 0,
            Rounding::NearestEven => 1,
        }
    }

    /// Kernel-label suffix, PTX rounding-modifier style: `rz`, `rn`.
    pub fn label_suffix(self) -> &'static str {
        match self {
            Rounding::Truncate => "rz",
            Rounding::NearestEven => "rn",
        }
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    #[error("unknown rounding '{0}' (expected trunc or rne)")]
    Rounding(String),
    #[error(
        "unknown numerical contract '{0}' (expected tf32-rne-k8-inorder or tf32-trunc-k8-inorder)"
    )]
    Contract(String),
}

impl FromStr for Rounding {
    type Err = ContractError;
    /// Accepts `trunc`/`truncate`/`rz` and `rne`/`nearest-even`/`nearest_even`/`rn`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "trunc" | "truncate" | "rz" => Ok(Rounding::Truncate),
            "rne" | "nearest-even" | "nearest_even" | "rn" => Ok(Rounding::NearestEven),
            other => Err(ContractError::Rounding(other.to_string())),
        }
    }
}

/// A numerical contract: TF32 inputs with a [`Rounding`], products of each k8 step added in
/// increasing K order into one f32 accumulator per output element that starts at +0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Contract {
    pub rounding: Rounding,
}

impl Contract {
    pub const fn new(rounding: Rounding) -> Contract {
        Contract { rounding }
    }

    /// The name profiles record: `tf32-rne-k8-inorder` or `tf32-trunc-k8-inorder`.
    pub fn name(&self) -> &'static str {
        match self.rounding {
            Rounding::Truncate => "tf32-trunc-k8-inorder",
            Rounding::NearestEven => "tf32-rne-k8-inorder",
        }
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Contract {
    type Err = ContractError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rounding::ALL
            .into_iter()
            .map(Contract::new)
            .find(|c| c.name() == s)
            .ok_or_else(|| ContractError::Contract(s.to_string()))
    }
}

impl From<Contract> for String {
    fn from(c: Contract) -> String {
        c.name().to_string()
    }
}

impl TryFrom<String> for Contract {
    type Error = ContractError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Rounding> for Contract {
    fn from(r: Rounding) -> Contract {
        Contract::new(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Rounding::ALL {
            assert_eq!(r.as_str().parse::<Rounding>().unwrap(), r);
            assert_eq!(r.label_suffix().parse::<Rounding>().unwrap(), r);
            let c = Contract::new(r);
            assert_eq!(c.name().parse::<Contract>().unwrap(), c);
        }
        assert_eq!(
            Contract::new(Rounding::NearestEven).name(),
            "tf32-rne-k8-inorder"
        );
        assert_eq!(
            Contract::new(Rounding::Truncate).name(),
            "tf32-trunc-k8-inorder"
        );
        assert!("bitexact".parse::<Contract>().is_err());
        assert!("rna".parse::<Rounding>().is_err());
    }

    #[test]
    fn serde_uses_the_names() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Meta {
            rounding: Rounding,
            numerical_contract: Contract,
        }
        let m = Meta {
            rounding: Rounding::NearestEven,
            numerical_contract: Contract::new(Rounding::NearestEven),
        };
        let t = toml::to_string(&m).unwrap();
        assert!(t.contains("rounding = \"rne\""), "{t}");
        assert!(
            t.contains("numerical_contract = \"tf32-rne-k8-inorder\""),
            "{t}"
        );
        assert_eq!(toml::from_str::<Meta>(&t).unwrap(), m);
        assert!(toml::from_str::<Meta>("rounding = \"rne\"\nnumerical_contract = \"x\"").is_err());
    }

    #[test]
    fn defines_match_the_kernels() {
        assert_eq!(Rounding::Truncate.define(), 0);
        assert_eq!(Rounding::NearestEven.define(), 1);
    }
}
