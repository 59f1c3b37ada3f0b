//! The ids a tool loop's calls go back under: one of their own for each call, whatever
//! the server sent (none, an empty one, or one it used before).

use std::collections::HashSet;

use crate::data::provider::ToolCall;

/// Gives every call of a reply an id of its own: a call without one, or with one used
/// before in this loop (some servers number each reply's calls from 0), gets
/// `plx_STEP_N` — the results go back under ids the server can tell apart.
pub fn own_ids(calls: &mut [ToolCall], step: u32, used: &mut HashSet<String>) {
    for (n, call) in calls.iter_mut().enumerate() {
        if call.id.trim().is_empty() || used.contains(&call.id) {
            call.id = format!("plx_{step}_{n}");
            // A server may have used that form itself.
            let mut k = 1;
            while used.contains(&call.id) {
                call.id = format!("plx_{step}_{n}_{k}");
                k += 1;
            }
        }
        used.insert(call.id.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_string(),
            name: "get_now".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn reused_missing_and_colliding_ids_are_replaced_by_unused_ones() {
        let mut used = HashSet::new();
        let mut first = vec![call("call_0"), call("plx_2_1")];
        own_ids(&mut first, 1, &mut used);
        assert_eq!(first[0].id, "call_0");
        let mut second = vec![call("call_0"), call("")];
        own_ids(&mut second, 2, &mut used);
        assert_eq!(second[0].id, "plx_2_0");
        // The server's own `plx_2_1` is taken: the next form is used.
        assert_eq!(second[1].id, "plx_2_1_1");
        assert_eq!(used.len(), 4);
    }
}
