//! Reporters. They read artifacts (and preflight reports) and render them for people; they never
//! talk to an endpoint and never change an artifact.
//!
//! Model output is untrusted text: the terminal reporter strips control characters (an ANSI
//! escape in a reply must not repaint the operator's terminal).

pub mod escape;
pub mod terminal;
