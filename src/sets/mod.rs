//! Many releases at once: the releases of one chart for `--all` ([`release_set`]) and a change across a
//! repository of charts ([`review`]), both printed by one printer of a set of releases ([`print`](mod@print)).

pub mod image_groups;
pub mod print;
pub mod release_set;
pub mod review;
