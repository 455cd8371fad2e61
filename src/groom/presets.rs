//! Procedural groom presets (`presets/grooms/*.toml`).

use super::procedural::GroomParams;
use crate::error::Result;
use crate::presets::{self, Table};

pub const TABLE: Table = &[
    ("straight", include_str!("../../presets/grooms/straight.toml")),
    ("wavy", include_str!("../../presets/grooms/wavy.toml")),
    ("curly", include_str!("../../presets/grooms/curly.toml")),
];

/// A built-in groom preset by name, or a TOML file by path.
pub fn load(name_or_path: &str) -> Result<GroomParams> {
    presets::load("groom", TABLE, name_or_path)
}

/// Parses groom parameters from TOML text; `origin` names the source in errors.
pub fn parse(text: &str, origin: &str) -> Result<GroomParams> {
    presets::parse(text, origin)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::procedural::Style;

    #[test]
    fn built_in_presets_parse_and_match_their_style() {
        for (name, style) in [
            ("straight", Style::Straight),
            ("wavy", Style::Wavy),
            ("curly", Style::Curly),
        ] {
            let p = load(name).unwrap();
            assert_eq!(p.style, style);
            assert_eq!(
                p,
                GroomParams::for_style(style),
                "{name}.toml and the code defaults disagree"
            );
        }
    }

    #[test]
    fn unknown_keys_and_presets_are_errors() {
        let e = parse("style = \"wavy\"\ncurl_radiuss = 1.0\n", "test.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("test.toml") && e.contains("curl_radiuss"), "{e}");
        assert!(load("afro-samurai").unwrap_err().to_string().contains("built in"));
    }
}
