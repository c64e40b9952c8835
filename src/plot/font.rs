//! The plot font, embedded so that drawing needs no fontconfig or system fonts: DejaVu Sans
//! 2.37 (license in `src/plot/DejaVuSans.LICENSE`), registered with plotters' ab_glyph
//! text backend as the `sans-serif` family.

use super::PlotError;
use plotters::style::{FontStyle, register_font};
use std::sync::OnceLock;

/// DejaVu Sans, as shipped by the DejaVu project (Bitstream Vera license, see
/// `DejaVuSans.LICENSE` beside it).
pub static DEJAVU_SANS: &[u8] = include_bytes!("DejaVuSans.ttf");

/// The family name the plots ask for.
pub const FAMILY: &str = "sans-serif";

static REGISTERED: OnceLock<bool> = OnceLock::new();

/// Registers the embedded font (once per process; later calls are free).
pub fn register() -> Result<(), PlotError> {
    let ok = *REGISTERED.get_or_init(|| {
        // Every style falls back to Normal, so one registration covers bold and italic.
        register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}
