//! Many releases at once: the releases of one chart for `--all` ([`release_set`]) and a change across a
//! repository of charts ([`review`]).

pub mod release_set;
pub mod review;
