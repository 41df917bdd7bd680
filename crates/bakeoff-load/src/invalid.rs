//! Why a load plan or one of its inputs is refused.

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
