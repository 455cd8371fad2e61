//! Procedural groom presets: TOML files in `presets/grooms/`, embedded in the binary so that
//! `--preset wavy` works from any folder; a path to a TOML file works too.

use std::path::Path;

use super::procedural::GroomParams;
use crate::error::{Error, Result};

const EMBEDDED: &[(&str, &str)] = &[
    ("straight", include_str!("../../presets/grooms/straight.toml")),
    ("wavy", include_str!("../../presets/grooms/wavy.toml")),
    ("curly", include_str!("../../presets/grooms/curly.toml")),
];

/// Names of the built-in groom presets.
pub fn names() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).collect()
}

/// Parses groom parameters from TOML text; `origin` names the source in errors.
pub fn parse(text: &str, origin: &str) -> Result<GroomParams> {
    toml::from_str(text).map_err(|e| Error::Invalid(format!("{origin}: {}", e.message().trim())))
}

/// A built-in preset by name, or a TOML file by path.
pub fn load(name_or_path: &str) -> Result<GroomParams> {
    if let Some((_, text)) = EMBEDDED.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("preset {name_or_path}"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        return parse(&text, &path.display().to_string());
    }
    Err(Error::Invalid(format!(
        "unknown groom preset {name_or_path:?} (built in: {}; or give a .toml file)",
        names().join(", ")
    )))
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
