//! Typed command-line values: each option is parsed into its type by the type's `FromStr`
//! (and checked), so `--help` lists the valid values and a bad one is one clear error line.

use crate::arch::Arch;
use crate::contract::{Contract, Rounding};
use crate::schedule::{Dtype, Layout};
use crate::shape::{Shape, ShapeList};
use crate::tune::gpus::GpuSet;
use crate::tune::shard::Shard;
use crate::util::{MAX_QUOTED, clip};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

/// A command-line value parsed by its type's `FromStr` and then checked: an error is one
/// `error:` line naming the option and the value (at most [`MAX_QUOTED`] characters of it), and
/// `--help` lists the valid values where they are few.
#[derive(Clone)]
pub(super) struct Typed<T> {
    values: fn() -> Vec<&'static str>,
    check: fn(&T) -> Result<(), &'static str>,
    _type: PhantomData<fn() -> T>,
}

/// Any value its `FromStr` accepts; `values` for `--help`.
pub(super) fn typed<T>(values: fn() -> Vec<&'static str>) -> Typed<T> {
    Typed {
        values,
        check: |_| Ok(()),
        _type: PhantomData,
    }
}

/// A parsed value that must also pass `check` (open-ended values such as counts).
pub(super) fn checked<T>(check: fn(&T) -> Result<(), &'static str>) -> Typed<T> {
    Typed {
        values: open_ended,
        check,
        _type: PhantomData,
    }
}

pub(super) fn open_ended() -> Vec<&'static str> {
    vec![]
}

impl<T> TypedValueParser for Typed<T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // `--shapes X: …` for an option, `SHAPE X: …` for a positional argument.
        let name = match arg {
            Some(a) => a
                .get_long()
                .map_or_else(|| a.get_id().as_str().to_uppercase(), |l| format!("--{l}")),
            None => "value".to_string(),
        };
        let shown = clip(&value.to_string_lossy(), MAX_QUOTED);
        let raw = |why: String| {
            clap::Error::raw(ErrorKind::InvalidValue, format!("{name} {shown}: {why}\n"))
        };
        let text = value
            .to_str()
            .ok_or_else(|| raw("not valid UTF-8".into()))?;
        let v: T = text
            .trim()
            .parse()
            .map_err(|e: T::Err| raw(clip(&e.to_string(), MAX_QUOTED)))?;
        (self.check)(&v).map_err(|why| raw(why.into()))?;
        Ok(v)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values = (self.values)();
        (!values.is_empty()).then(|| {
            Box::new(values.into_iter().map(PossibleValue::new))
                as Box<dyn Iterator<Item = PossibleValue>>
        })
    }
}

pub(super) fn count_parser() -> Typed<usize> {
    checked(|&n| {
        if n >= 1 {
            Ok(())
        } else {
            Err("must be at least 1")
        }
    })
}
pub(super) fn watchdog_parser() -> Typed<u64> {
    checked(|&s| {
        if s >= 1 {
            Ok(())
        } else {
            Err("must be at least 1 second")
        }
    })
}
pub(super) fn seconds_parser() -> Typed<f64> {
    checked(|&s| {
        if s.is_finite() && s > 0.0 {
            Ok(())
        } else {
            Err("must be a finite number of seconds above 0")
        }
    })
}
pub(super) fn heat_parser() -> Typed<f64> {
    checked(|&ms| {
        if ms.is_finite() && (0.0..=60_000.0).contains(&ms) {
            Ok(())
        } else {
            Err("must be a number of milliseconds from 0 to 60000")
        }
    })
}

pub(super) fn arch_parser() -> Typed<Arch> {
    typed(Arch::known)
}
pub(super) fn dtype_parser() -> Typed<Dtype> {
    typed(|| Dtype::ALL.iter().map(|d| d.as_str()).collect())
}
pub(super) fn layout_parser() -> Typed<Layout> {
    typed(|| Layout::ALL.iter().map(|l| l.as_str()).collect())
}
pub(super) fn contract_parser() -> Typed<Contract> {
    typed(|| {
        Rounding::ALL
            .iter()
            .map(|&r| Contract::new(r).name())
            .collect()
    })
}
pub(super) fn gpus_parser() -> Typed<GpuSet> {
    typed(open_ended)
}
pub(super) fn shard_parser() -> Typed<Shard> {
    typed(open_ended)
}
pub(super) fn shapes_parser() -> Typed<ShapeList> {
    typed(open_ended)
}
pub(super) fn shape_parser() -> Typed<Shape> {
    typed(open_ended)
}
