//! What every room uses: typed errors, output, other programs, cozyhr's cache, Go durations, CEL
//! expressions and the work spread over all cores.

pub mod cache;
pub mod cel;
pub mod duration;
pub mod error;
pub mod output;
pub mod par;
pub mod process;
