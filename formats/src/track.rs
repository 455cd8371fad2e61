//! Head-track files for pipelines that export their own motion: per-frame rigid transforms as
//! CSV or JSON.
//!
//! CSV: a header naming the columns, then one row per key. Columns: `frame` or `time` (seconds),
//! then either `tx,ty,tz,qx,qy,qz,qw` (translation and unit quaternion) or `m00 … m33` (a 4×4
//! matrix, row-major, column vectors: translation in `m03, m13, m23`). `#` starts a comment.
//!
//! JSON: `{"fps": 24, "keys": [{"frame": 1001, "translation": [x, y, z], "rotation": [x, y, z, w]},
//! {"time": 42.1, "matrix": [16 numbers, row-major]}]}`.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, InFile, Result};

#[derive(Clone, Debug, PartialEq)]
pub enum KeyValue {
    /// Translation and quaternion (x, y, z, w).
    TranslationRotation([f64; 3], [f64; 4]),
    /// Row-major 4×4, column-vector convention.
    Matrix([f64; 16]),
}

#[derive(Clone, Debug, PartialEq)]
pub enum KeyTime {
    Frame(f64),
    Seconds(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrackFile {
    pub fps: Option<f64>,
    pub keys: Vec<(KeyTime, KeyValue)>,
}

const TRS: [&str; 7] = ["tx", "ty", "tz", "qx", "qy", "qz", "qw"];

fn finite(v: &[f64], line: usize) -> Result<()> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err(Error::corrupt(format!("line {line}: a value is not finite")));
    }
    Ok(())
}

/// Parses a CSV track.
pub fn parse_csv(text: &str) -> Result<TrackFile> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines
        .next()
        .ok_or_else(|| Error::corrupt("the track file is empty"))?;
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
    let time_col = match cols.first().map(String::as_str) {
        Some("frame") => true,
        Some("time") => false,
        _ => return Err(Error::corrupt("the first CSV column must be `frame` or `time`")),
    };
    let matrix_cols: Vec<String> = (0..16).map(|i| format!("m{}{}", i / 4, i % 4)).collect();
    let is_trs = cols[1..] == TRS;
    let is_matrix = cols[1..] == matrix_cols[..];
    if !is_trs && !is_matrix {
        return Err(Error::corrupt(format!(
            "CSV columns after `{}` must be {} or m00..m33",
            cols[0],
            TRS.join(",")
        )));
    }
    let mut keys = Vec::new();
    for (i, l) in lines {
        let line = i + 1;
        let v: Vec<f64> = l
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| Error::corrupt(format!("line {line}: {s:?} is not a number")))
            })
            .collect::<Result<_>>()?;
        if v.len() != cols.len() {
            return Err(Error::corrupt(format!(
                "line {line}: {} values for {} columns",
                v.len(),
                cols.len()
            )));
        }
        finite(&v, line)?;
        let t = if time_col {
            KeyTime::Frame(v[0])
        } else {
            KeyTime::Seconds(v[0])
        };
        let value = if is_trs {
            KeyValue::TranslationRotation([v[1], v[2], v[3]], [v[4], v[5], v[6], v[7]])
        } else {
            KeyValue::Matrix(std::array::from_fn(|k| v[k + 1]))
        };
        keys.push((t, value));
    }
    Ok(TrackFile { fps: None, keys })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonKey {
    frame: Option<f64>,
    time: Option<f64>,
    translation: Option<[f64; 3]>,
    rotation: Option<[f64; 4]>,
    matrix: Option<Vec<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTrack {
    fps: Option<f64>,
    keys: Vec<JsonKey>,
}

/// Parses a JSON track.
pub fn parse_json(text: &str) -> Result<TrackFile> {
    let j: JsonTrack =
        serde_json::from_str(text).map_err(|e| Error::corrupt(format!("not a track file: {e}")))?;
    let mut keys = Vec::with_capacity(j.keys.len());
    for (i, k) in j.keys.into_iter().enumerate() {
        let t = match (k.frame, k.time) {
            (Some(f), None) => KeyTime::Frame(f),
            (None, Some(s)) => KeyTime::Seconds(s),
            _ => {
                return Err(Error::corrupt(format!(
                    "key {i}: give exactly one of `frame` and `time`"
                )));
            }
        };
        let value = match (k.translation, k.rotation, k.matrix) {
            (Some(t), Some(r), None) => KeyValue::TranslationRotation(t, r),
            (None, None, Some(m)) if m.len() == 16 => KeyValue::Matrix(std::array::from_fn(|x| m[x])),
            _ => {
                return Err(Error::corrupt(format!(
                    "key {i}: give `translation` and `rotation`, or a 16-number `matrix`"
                )));
            }
        };
        keys.push((t, value));
    }
    Ok(TrackFile { fps: j.fps, keys })
}

/// Reads a `.csv` or `.json` track.
pub fn read(path: impl AsRef<Path>) -> Result<TrackFile> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).in_file(path)?;
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if json { parse_json(&text) } else { parse_csv(&text) }.in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_both_layouts() {
        let t = parse_csv(
            "# head\nframe,tx,ty,tz,qx,qy,qz,qw\n1001,0,1,2,0,0,0,1\n1002, 0.5,1,2,0,0.7071068,0,0.7071068\n",
        )
        .unwrap();
        assert_eq!(t.keys.len(), 2);
        assert_eq!(t.keys[0].0, KeyTime::Frame(1001.0));
        let m: Vec<String> = (0..16).map(|i| format!("m{}{}", i / 4, i % 4)).collect();
        let text = format!("time,{}\n0.5,1,0,0,3,0,1,0,0,0,0,1,0,0,0,0,1\n", m.join(","));
        let t = parse_csv(&text).unwrap();
        assert!(matches!(t.keys[0], (KeyTime::Seconds(0.5), KeyValue::Matrix(m)) if m[3] == 3.0));
        assert!(parse_csv("frame,x\n1,2\n").is_err());
        assert!(parse_csv("frame,tx,ty,tz,qx,qy,qz,qw\n1,2\n").is_err());
        assert!(parse_csv("frame,tx,ty,tz,qx,qy,qz,qw\n1,a,0,0,0,0,0,1\n").is_err());
    }

    #[test]
    fn json_keys() {
        let t = parse_json(
            r#"{"fps": 24, "keys": [{"frame": 1, "translation": [0,0,0], "rotation": [0,0,0,1]}]}"#,
        )
        .unwrap();
        assert_eq!(t.fps, Some(24.0));
        assert!(parse_json(r#"{"keys": [{"frame": 1, "time": 2, "matrix": []}]}"#).is_err());
        assert!(parse_json(r#"{"keys": [], "speed": 3}"#).is_err());
    }
}
