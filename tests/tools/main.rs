//! The tools module: the executor's rules (output level, storing large results, retries
//! and their delays, the unified error observation, the cache) with scripted tools, and
//! the built-in tools on real files, a real database and a fixed clock.

mod builtins;
mod common;
mod executor;
mod time;
