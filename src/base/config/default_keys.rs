//! The default key bindings table (`default_keys.txt`, built in): what the `[keys]`
//! overrides replace, the keymap starts from and the config's errors list.

/// The default bindings: one action a line, its name then its keys in the order the
/// help overlay lists them (`src/base/config/default_keys.txt`, built in).
pub const DEFAULTS: &str = include_str!("default_keys.txt");

/// The rows of [`DEFAULTS`]: each action's name and its key strings, in table order.
pub fn defaults() -> impl Iterator<Item = (&'static str, Vec<&'static str>)> {
    DEFAULTS
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            Some((name, words.collect()))
        })
}

/// Every action's name, in the order of the defaults table.
pub fn action_names() -> Vec<&'static str> {
    defaults().map(|(name, _)| name).collect()
}
