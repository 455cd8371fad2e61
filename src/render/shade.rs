//! Shading. Hair: Kajiya & Kay (1989) — diffuse ∝ sin(T, L) — with the two specular lobes
//! Marschner et al. (2003) measured on real fibres, in Scheuermann's (2004) real-time form: a
//! white primary highlight (R, light reflected at the fibre's surface) shifted towards the
//! root, and a wider secondary one tinted by the hair's colour (TRT, light that went through
//! the fibre and back) shifted towards the tip; each lobe is Kajiya–Kay's
//! `sin(T′, H)^p` with the tangent `T′` tilted along the fibre's normal by the shift. The key
//! light is scaled by the share that reaches the point ([`super::shadow`]). Solids: Lambert.

use glam::Vec3;

/// Light and colours of a picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// Unit vector towards the key light.
    pub light: Vec3,
    pub hair: [f32; 3],
    pub skin: [f32; 3],
    pub background: [f32; 3],
    pub ambient: f32,
    /// Strength and exponent of the primary (R) highlight.
    pub specular: f32,
    pub shininess: f32,
    /// Strength and exponent of the secondary (TRT) highlight, tinted by the hair colour.
    pub secondary: f32,
    pub secondary_shininess: f32,
    /// Tilt of the primary highlight's tangent along the normal (the secondary's is −1.5×):
    /// Marschner's cuticle scales tilt the lobes by 5–10°, about 0.1.
    pub shift: f32,
    /// Self-shadowing from the key light (deep opacity map) and the fibres' opacity κ there.
    pub shadows: bool,
    pub fibre_opacity: f32,
}

impl Default for Lighting {
    fn default() -> Self {
        Lighting {
            light: Vec3::new(0.4, 0.8, 0.6).normalize(),
            hair: [0.30, 0.17, 0.08],
            skin: [0.80, 0.62, 0.52],
            background: [0.92, 0.93, 0.95],
            ambient: 0.30,
            specular: 0.30,
            shininess: 80.0,
            secondary: 0.45,
            secondary_shininess: 20.0,
            shift: 0.1,
            shadows: true,
            fibre_opacity: 1.0,
        }
    }
}

impl Lighting {
    /// Colour of hair with tangent `t` (root to tip) seen along `view` (unit vector towards the
    /// eye) with `lit` of the key light reaching it.
    pub fn hair(&self, t: Vec3, view: Vec3, base: [f32; 3], lit: f32) -> [f32; 3] {
        let tl = t.dot(self.light).clamp(-1.0, 1.0);
        let diffuse = (1.0 - tl * tl).sqrt();
        // The fibre's normal facing the eye, and the half vector.
        let n = (view - t * t.dot(view)).normalize_or(view);
        let h = (self.light + view).normalize_or(view);
        let lobe = |shift: f32, p: f32| {
            let ts = (t + shift * n).normalize_or(t);
            let th = ts.dot(h).clamp(-1.0, 1.0);
            (1.0 - th * th).max(0.0).sqrt().powf(p)
        };
        let r = self.specular * lobe(-self.shift, self.shininess);
        let trt = self.secondary * lobe(1.5 * self.shift, self.secondary_shininess);
        // No highlight from a light behind the fibre's lit side.
        let facing = ((self.light.dot(n) + 1.0) * 0.5).clamp(0.0, 1.0);
        let mut out = [0.0; 3];
        for k in 0..3 {
            out[k] = base[k] * (self.ambient + (1.0 - self.ambient) * diffuse * lit)
                + facing * lit * (r + trt * base[k]);
        }
        out
    }

    /// The ambient part of a solid's colour and the part the key light adds (normal `n`).
    pub fn solid_parts(&self, n: Vec3) -> ([f32; 3], [f32; 3]) {
        let d = n.dot(self.light).max(0.0);
        (
            self.skin.map(|c| c * self.ambient),
            self.skin.map(|c| c * (1.0 - self.ambient) * d),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hair_is_brightest_across_the_light_and_darker_in_shadow() {
        let l = Lighting::default();
        let across = l.light.any_orthonormal_vector();
        let a = l.hair(across, Vec3::Z, [0.5; 3], 1.0);
        let b = l.hair(l.light, Vec3::Z, [0.5; 3], 1.0);
        // Along the light the diffuse part is gone (sin = 0).
        assert!(a[0] > b[0]);
        // In full shadow only the ambient part is left.
        let dark = l.hair(across, Vec3::Z, [0.5; 3], 0.0);
        assert!((dark[0] - 0.5 * l.ambient).abs() < 1e-6);
    }

    #[test]
    fn the_highlights_peak_where_the_tilted_tangent_is_normal_to_the_half_vector() {
        // Light and eye both along +z, fibre along x: H = z ⟂ T, so an unshifted lobe is at
        // its peak; tilting the tangent moves the peak, so the highlight drops by cos(shift)^p.
        let l = Lighting {
            light: Vec3::Z,
            secondary: 0.0,
            ..Lighting::default()
        };
        let base = [0.0; 3];
        let c = l.hair(Vec3::X, Vec3::Z, base, 1.0);
        let tilt = l.shift.atan();
        let expected = l.specular * tilt.cos().powf(l.shininess);
        assert!((c[0] - expected).abs() < 1e-5, "{} vs {expected}", c[0]);
    }
}
