//! Units of what tress prints for machines (`--json`, reports): durations as seconds.

use std::time::Duration;

use serde::Serializer;

/// Serializes a duration as a number of seconds (serde's default is `{secs, nanos}`, which
/// no script wants to parse).
pub fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct T {
        #[serde(serialize_with = "super::secs")]
        d: std::time::Duration,
    }

    #[test]
    fn durations_are_seconds() {
        let v = serde_json::to_value(T {
            d: std::time::Duration::from_millis(1500),
        })
        .unwrap();
        assert_eq!(v, serde_json::json!({"d": 1.5}));
    }
}
