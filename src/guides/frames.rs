//! Local frames along a guide strand: the rotation at each particle that takes the strand's
//! rest shape to its current shape, by parallel transport from the root (the rotation-minimizing
//! frame, so a strand that bends does not also twist its neighbours around it).

use glam::{Quat, Vec3};

/// Unit tangent at particle `i`: central difference inside, one-sided at the ends.
fn tangent(p: &[Vec3], i: usize) -> Vec3 {
    let n = p.len();
    let (a, b) = if n < 2 {
        return Vec3::Y;
    } else if i == 0 {
        (p[0], p[1])
    } else if i + 1 >= n {
        (p[n - 2], p[n - 1])
    } else {
        (p[i - 1], p[i + 1])
    };
    (b - a).normalize_or(Vec3::Y)
}

/// The rotations R(i) of a strand: R(0) turns the rest tangent at the root onto the current
/// one, and each R(i) = arc(R(i−1)·t̄ᵢ → tᵢ) · R(i−1) carries the previous frame along.
pub fn transport(rest: &[Vec3], cur: &[Vec3], out: &mut Vec<Quat>) {
    out.clear();
    let mut r = Quat::IDENTITY;
    for i in 0..rest.len().min(cur.len()) {
        let carried = r * tangent(rest, i);
        r = (Quat::from_rotation_arc(carried, tangent(cur, i)) * r).normalize();
        out.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rigid_motion_gives_one_rotation_and_bends_rotate_locally() {
        let rest: Vec<Vec3> = (0..10).map(|i| Vec3::new(0.0, -(i as f32), 0.0)).collect();
        let q = Quat::from_rotation_z(0.7);
        let cur: Vec<Vec3> = rest.iter().map(|p| q * *p + Vec3::X).collect();
        let mut r = Vec::new();
        transport(&rest, &cur, &mut r);
        assert!(r.iter().all(|x| x.angle_between(q) < 1e-5));
        // A strand bent 90° halfway: the root frames stay, the tip frames turn by 90°.
        let bent: Vec<Vec3> = (0..10)
            .map(|i| {
                if i < 5 {
                    rest[i]
                } else {
                    Vec3::new((i - 4) as f32, -4.0, 0.0)
                }
            })
            .collect();
        transport(&rest, &bent, &mut r);
        assert!(r[1].angle_between(Quat::IDENTITY) < 1e-5);
        assert!((r[8].angle_between(Quat::IDENTITY) - std::f32::consts::FRAC_PI_2).abs() < 1e-4);
        assert!((r[8] * Vec3::NEG_Y - Vec3::X).length() < 1e-4);
    }
}
