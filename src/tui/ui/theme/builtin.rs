//! The built-in themes: their names and their data files, embedded in the binary from
//! the top-level `themes/` folder.

/// The names of the built-in themes; the first is the default.
pub const BUILTIN_NAMES: [&str; 3] = ["dark", "light", "high-contrast"];

const DARK_TOML: &str = include_str!("../../../../themes/dark.toml");
const LIGHT_TOML: &str = include_str!("../../../../themes/light.toml");
const HIGH_CONTRAST_TOML: &str = include_str!("../../../../themes/high-contrast.toml");

/// A built-in theme's canonical name, file name and source.
pub(super) struct Builtin {
    pub(super) name: &'static str,
    pub(super) file: &'static str,
    pub(super) src: &'static str,
}

pub(super) fn builtin_source(name: &str) -> Option<Builtin> {
    let (name, file, src) = match name.trim().to_ascii_lowercase().as_str() {
        "dark" => ("dark", "themes/dark.toml", DARK_TOML),
        "light" => ("light", "themes/light.toml", LIGHT_TOML),
        "high-contrast" | "high_contrast" => (
            "high-contrast",
            "themes/high-contrast.toml",
            HIGH_CONTRAST_TOML,
        ),
        _ => return None,
    };
    Some(Builtin { name, file, src })
}
