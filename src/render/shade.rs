//! Shading: the Kajiya–Kay hair model (Kajiya & Kay 1989) for strands — diffuse ∝ sin(T, L),
//! specular ∝ (cos(T,L)cos(T,V) + sin(T,L)sin(T,V))^p, i.e. light scattered on a cone around
//! the tangent — and Lambert for solids.

use glam::Vec3;

/// Light and colours of a picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// Unit vector towards the light.
    pub light: Vec3,
    pub hair: [f32; 3],
    pub skin: [f32; 3],
    pub background: [f32; 3],
    pub ambient: f32,
    pub specular: f32,
    pub shininess: f32,
}

impl Default for Lighting {
    fn default() -> Self {
        Lighting {
            light: Vec3::new(0.4, 0.8, 0.6).normalize(),
            hair: [0.30, 0.17, 0.08],
            skin: [0.80, 0.62, 0.52],
            background: [0.92, 0.93, 0.95],
            ambient: 0.35,
            specular: 0.35,
            shininess: 40.0,
        }
    }
}

impl Lighting {
    /// Colour of hair with tangent `t` seen along `view` (unit vector towards the eye).
    pub fn hair(&self, t: Vec3, view: Vec3, base: [f32; 3]) -> [f32; 3] {
        let tl = t.dot(self.light).clamp(-1.0, 1.0);
        let tv = t.dot(view).clamp(-1.0, 1.0);
        let sin_l = (1.0 - tl * tl).sqrt();
        let sin_v = (1.0 - tv * tv).sqrt();
        let diffuse = sin_l;
        let spec = (tl * tv + sin_l * sin_v).max(0.0).powf(self.shininess) * self.specular;
        base.map(|c| c * (self.ambient + (1.0 - self.ambient) * diffuse) + spec)
    }

    /// Colour of a solid with normal `n`.
    pub fn solid(&self, n: Vec3) -> [f32; 3] {
        let d = n.dot(self.light).max(0.0);
        self.skin.map(|c| c * (self.ambient + (1.0 - self.ambient) * d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hair_is_brightest_across_the_light() {
        let l = Lighting::default();
        let across = l.light.any_orthonormal_vector();
        let a = l.hair(across, Vec3::Z, [0.5; 3]);
        let b = l.hair(l.light, Vec3::Z, [0.5; 3]);
        // Along the light only ambient is left (sin = 0).
        assert!(a[0] > b[0]);
        assert!((b[0] - 0.5 * l.ambient).abs() < 0.05);
    }
}
