//! Metrics as a markdown table.

use super::eval::Summary;

/// A table row: method name, its metrics, and its preview PSNR / SSIM when known.
pub type Row = (String, Summary, Option<(f64, f64)>);

/// One row per method: RMSE, max error, length error, tangent error, penetration (and, when
/// any row met a prop, penetration of the props alone), jitter, 000 §5.7's non-local
/// interactions when measured, and preview PSNR / SSIM when known. Lengths in the scene's
/// units (cm).
pub fn markdown(rows: &[Row]) -> String {
    let props = rows.iter().any(|r| r.1.penetration_props_max > 0.0);
    let nonlocal = rows.iter().any(|r| r.1.remote_share.is_some());
    let mut s = String::from(
        "| method | RMSE (cm) | max (cm) | length error mean / max | tangent (°) | penetrating vertices | deepest (cm) |",
    );
    if props {
        s.push_str(" inside props | deepest in props (cm) |");
    }
    s.push_str(" jitter (cm) |");
    if nonlocal {
        s.push_str(" remote interactions (GT) / kept |");
    }
    s.push_str(" preview PSNR (dB) / SSIM |\n| --- | --- | --- | --- | --- | --- | --- |");
    if props {
        s.push_str(" --- | --- |");
    }
    if nonlocal {
        s.push_str(" --- |");
    }
    s.push_str(" --- | --- |\n");
    for (name, m, img) in rows {
        let img = match img {
            Some((p, q)) => format!("{p:.1} / {q:.3}"),
            None => "–".into(),
        };
        let prop_cols = if props {
            format!(
                " {:.3} % | {:.3} |",
                100.0 * m.penetration_props_fraction,
                m.penetration_props_max
            )
        } else {
            String::new()
        };
        let remote_col = match (nonlocal, m.remote_share) {
            (false, _) => String::new(),
            (true, None) => " – |".into(),
            (true, Some(r)) => {
                let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{:.1} %", 100.0 * v));
                format!(
                    " {} ({}) / {} |",
                    pct(Some(r)),
                    pct(m.remote_share_gt),
                    pct(m.remote_kept)
                )
            }
        };
        s.push_str(&format!(
            "| {name} | {:.4} | {:.3} | {:.2} % / {:.2} % | {:.2} | {:.3} % | {:.3} |{prop_cols} {:.4} (GT {:.4}) |{remote_col} {img} |\n",
            m.rmse,
            m.max_error,
            100.0 * m.length_error_mean,
            100.0 * m.length_error_max,
            m.tangent_error_deg,
            100.0 * m.penetration_fraction,
            m.penetration_max,
            m.jitter,
            m.jitter_gt
        ));
    }
    s
}
