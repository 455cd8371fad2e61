//! The hair-mesh solver checked against dense linear algebra and the energy's gradient.

use super::mcg::{ColumnPreconditioner, Filter};
use super::*;
use crate::hairmesh::mesh::ProceduralMesh;

fn mesh() -> HairMesh {
    HairMesh::procedural(&ProceduralMesh {
        columns_u: 3,
        columns_v: 3,
        layers: 7,
        length: 18.0,
        ..Default::default()
    })
    .unwrap()
}

/// A simulation of the test mesh with every vertex moved by up to `amplitude` cm.
fn deformed(amplitude: f64) -> HairMeshSim {
    let mut sim = HairMeshSim::new(mesh(), HairMeshParams::default(), None, 0.0).unwrap();
    for (i, x) in sim.x.iter_mut().enumerate() {
        let i = i as f64;
        *x += amplitude * DVec3::new((i * 0.7).sin(), (i * 1.1).cos(), (i * 0.3).sin());
    }
    sim
}

#[test]
fn system_matrix_is_symmetric_positive_definite() {
    // Deformed a little so every term is active.
    let mut sim = deformed(0.3);
    let n = sim.x.len();
    let mut b = vec![DVec3::ZERO; n];
    sim.assemble(1.0 / 48.0, &mut b);
    let dense = dense(&sim);
    let asym = (&dense - dense.transpose()).abs().max();
    assert!(asym < 1e-9 * dense.abs().max(), "asymmetry {asym}");
    let lo = nalgebra::SymmetricEigen::new(dense).eigenvalues.min();
    assert!(lo > 0.0);
}

/// The assembled force (at zero velocity, `b = h f`) is minus the gradient of the total
/// energy, by finite differences: checks every element's scatter into the system.
#[test]
fn assembled_forces_are_minus_the_energy_gradient() {
    let mut sim = deformed(0.4);
    let n = sim.x.len();
    let h = 1.0 / 48.0;
    let mut b = vec![DVec3::ZERO; n];
    sim.assemble(h, &mut b);
    let eps = 1e-5;
    let mut worst = 0.0f64;
    let mut largest = 0.0f64;
    for (i, bi) in b.iter().enumerate() {
        for k in 0..3 {
            let x0 = sim.x[i][k];
            sim.x[i][k] = x0 + eps;
            let up = sim.energy();
            sim.x[i][k] = x0 - eps;
            let down = sim.energy();
            sim.x[i][k] = x0;
            let f = -(up - down) / (2.0 * eps);
            worst = worst.max((bi[k] / h - f).abs());
            largest = largest.max(f.abs());
        }
    }
    assert!(worst < 1e-5 * largest, "force error {worst} of {largest}");
}

/// A filter per vertex for the solver tests: roots fixed, a few vertices in contact.
fn test_filters(sim: &HairMeshSim) -> Vec<Filter> {
    (0..sim.x.len())
        .map(|i| {
            if sim.mesh.layer_of(i) == 0 {
                Filter::Fixed
            } else if i % 5 == 2 {
                Filter::Plane(DVec3::new(1.0, 2.0, -0.5).normalize())
            } else {
                Filter::Free
            }
        })
        .collect()
}

/// The deformed test mesh with its system assembled for step `h`: the simulation, the
/// right-hand side and the test filters.
fn assembled(h: f64) -> (HairMeshSim, Vec<DVec3>, Vec<Filter>) {
    let mut sim = deformed(0.3);
    let mut b = vec![DVec3::ZERO; sim.x.len()];
    sim.assemble(h, &mut b);
    let filter = test_filters(&sim);
    (sim, b, filter)
}

/// The assembled block matrix as a dense 3n × 3n matrix (both triangles).
fn dense(sim: &HairMeshSim) -> nalgebra::DMatrix<f64> {
    let n = sim.x.len();
    let mut out = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    for i in 0..n {
        for j in 0..n {
            let m = sim.block(i, j);
            for (c, col) in m.to_cols_array_2d().iter().enumerate() {
                for (r, v) in col.iter().enumerate() {
                    out[(3 * i + r, 3 * j + c)] = *v;
                }
            }
        }
    }
    out
}

/// The matrix and right-hand side equal Baraff & Witkin Eq. 16 written out condition by
/// condition (every gradient from the force kernels, `(h k_d + h² k) ∇C ∇Cᵀ` as dense
/// outer products, the stretched triangles' Hessian part), at a deformed state with moving
/// vertices: checks the triangles' three-matrix form, the sorted upper-triangle scatter
/// and the velocity terms the finite-difference test (at rest) does not see.
#[test]
fn assembly_equals_the_implicit_step_written_out() {
    let mut sim = deformed(0.3);
    let n = sim.x.len();
    for (i, v) in sim.v.iter_mut().enumerate() {
        let i = i as f64;
        *v = DVec3::new((0.9 * i).cos(), (0.4 * i).sin(), (1.3 * i).cos()) * 5.0;
    }
    let h = 1.0 / 48.0;
    let mut b = vec![DVec3::ZERO; n];
    sim.assemble(h, &mut b);
    let p = sim.params.clone();
    let (x, v) = (&sim.x, &sim.v);
    let mut a = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
    let mut f = vec![DVec3::ZERO; n];
    let add =
        |vs: &[u32], c: f64, grad: &[DVec3], k: f64, f: &mut Vec<DVec3>, a: &mut nalgebra::DMatrix<f64>| {
            let kd = p.damping * k;
            let cdot: f64 = vs.iter().zip(grad).map(|(&i, g)| g.dot(v[i as usize])).sum();
            for (&i, g) in vs.iter().zip(grad) {
                f[i as usize] -= (k * c + (kd + h * k) * cdot) * *g;
            }
            for (&i, gi) in vs.iter().zip(grad) {
                for (&j, gj) in vs.iter().zip(grad) {
                    for r in 0..3 {
                        for col in 0..3 {
                            a[(3 * i as usize + r, 3 * j as usize + col)] +=
                                (h * kd + h * h * k) * gi[r] * gj[col];
                        }
                    }
                }
            }
        };
    for i in 0..n {
        let m = sim.mass[i];
        f[i] = m * DVec3::new(0.0, -p.gravity, 0.0) - p.drag * m * v[i];
        for r in 0..3 {
            a[(3 * i + r, 3 * i + r)] += m * (1.0 + h * p.drag);
        }
    }
    let mut stretched = 0;
    for t in &sim.tris {
        let xs = t.v.map(|i| x[i as usize]);
        for dir in 0..2 {
            let Some((c, grad, wh, len)) = t.rest.stretch(&xs, dir) else {
                continue;
            };
            add(&t.v, c, &grad, t.k[dir], &mut f, &mut a);
            if len > 1.0 {
                stretched += 1;
                let co = if dir == 0 { t.rest.alpha } else { t.rest.beta };
                let s = t.k[dir] * c * t.rest.area / len;
                let vel: DVec3 = (0..3).map(|j| co[j] * v[t.v[j] as usize]).sum();
                let pv = vel - vel.dot(wh) * wh;
                for i in 0..3 {
                    f[t.v[i] as usize] -= h * s * co[i] * pv;
                    for j in 0..3 {
                        for r in 0..3 {
                            for col in 0..3 {
                                let proj = if r == col { 1.0 } else { 0.0 } - wh[r] * wh[col];
                                a[(3 * t.v[i] as usize + r, 3 * t.v[j] as usize + col)] +=
                                    h * h * s * co[i] * co[j] * proj;
                            }
                        }
                    }
                }
            }
        }
        let (c, grad) = t.rest.shear(&xs);
        add(&t.v, c, &grad, t.k[2], &mut f, &mut a);
    }
    assert!(stretched > 0, "some triangles are stretched");
    for q in &sim.hinges {
        let Some((theta, grad)) = dihedral(&q.v.map(|i| x[i as usize])) else {
            continue;
        };
        add(&q.v, angle_diff(theta, q.rest), &grad, q.k, &mut f, &mut a);
    }
    for q in &sim.tets {
        let (vol, grad) = tet_volume(&q.v.map(|i| x[i as usize]));
        add(&q.v, vol - q.rest, &grad, q.k, &mut f, &mut a);
    }
    let got = dense(&sim);
    let err = (&got - &a).amax();
    // The blocks are single precision.
    assert!(err < 1e-6 * a.amax(), "matrix error {err} of {}", a.amax());
    let largest = f.iter().map(|g| g.abs().max_element()).fold(0.0, f64::max);
    for (bi, fi) in b.iter().zip(&f) {
        assert!(
            (*bi - h * *fi).abs().max_element() < 1e-9 * h * largest,
            "{bi} vs {}",
            h * *fi
        );
    }
}

fn projector(f: Filter) -> nalgebra::Matrix3<f64> {
    match f {
        Filter::Free => nalgebra::Matrix3::identity(),
        Filter::Plane(n) => {
            let n = nalgebra::Vector3::new(n.x, n.y, n.z);
            nalgebra::Matrix3::identity() - n * n.transpose()
        }
        Filter::Fixed => nalgebra::Matrix3::zeros(),
    }
}

/// The filtered system `S A S + (I − S)` as a dense matrix, keeping only the couplings
/// `keep(i, j)` allows.
fn dense_filtered(
    sim: &HairMeshSim,
    filter: &[Filter],
    keep: impl Fn(usize, usize) -> bool,
) -> nalgebra::DMatrix<f64> {
    let a = dense(sim);
    let n = filter.len();
    let mut out = nalgebra::DMatrix::zeros(3 * n, 3 * n);
    for i in 0..n {
        for j in 0..n {
            if !keep(i, j) {
                continue;
            }
            let block: nalgebra::Matrix3<f64> = a.fixed_view::<3, 3>(3 * i, 3 * j).into();
            let mut m = projector(filter[i]) * block * projector(filter[j]);
            if i == j {
                m += nalgebra::Matrix3::identity() - projector(filter[i]);
            }
            out.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&m);
        }
    }
    out
}

fn flat(x: &[DVec3]) -> nalgebra::DVector<f64> {
    nalgebra::DVector::from_iterator(3 * x.len(), x.iter().flat_map(|p| p.to_array()))
}

/// The column preconditioner solves the filtered block-tridiagonal part of the matrix
/// exactly (checked against a dense LU solve), and the single-precision product agrees
/// with the double-precision matrix.
#[test]
fn column_preconditioner_and_block_product_match_dense_algebra() {
    let (sim, _, filter) = assembled(1.0 / 48.0);
    let n = sim.x.len();
    let layers = sim.mesh.layers;
    let tri = dense_filtered(&sim, &filter, |i, j| {
        i / layers == j / layers && (i % layers).abs_diff(j % layers) <= 1
    });
    let r: Vec<DVec3> = (0..n)
        .map(|i| filter[i].apply(DVec3::new((i as f64).sin(), (2.0 * i as f64).cos(), 0.3)))
        .collect();
    let pre = ColumnPreconditioner::new(&sim, &filter);
    let mut y = vec![DVec3::ZERO; n];
    pre.apply(&r, &mut y);
    let want = tri.lu().solve(&flat(&r)).unwrap();
    let err = (flat(&y) - &want).amax();
    assert!(err < 1e-9 * want.amax(), "preconditioner error {err}");

    let x: Vec<DVec3> = (0..n).map(|i| DVec3::new(1.0, (i as f64).cos(), -0.5)).collect();
    let mut q = vec![DVec3::ZERO; n];
    sim.mul(&x, &mut q);
    let want = dense(&sim) * flat(&x);
    let err = (flat(&q) - &want).amax();
    assert!(err < 1e-6 * want.amax(), "product error {err}");
}

/// The modified conjugate gradients reach the solution of the filtered system (a dense
/// solve) to their tolerance, with the constrained components equal to the prescribed ones.
#[test]
fn modified_conjugate_gradients_solve_the_filtered_system() {
    solves_the_filtered_system("MCG", 1e-5, |sim, h, b, filter, z, dv| {
        sim.params.cg_tolerance = 1e-8;
        sim.params.cg_max_iterations = 2000;
        assert!(sim.mcg(h, b, filter, z, dv) < 2000);
    });
}

/// A mesh of small bundles is solved directly (banded Cholesky per bundle), to the same
/// filtered system; a wide sheet is not.
#[test]
fn small_bundles_are_solved_directly_to_the_filtered_system() {
    solves_the_filtered_system("bundles", 1e-9, |sim, _, b, filter, z, dv| {
        assert!(
            sim.solve_bundles(b, filter, z, dv),
            "the 3 × 3-column test mesh is direct"
        );
    });
    let wide = HairMesh::procedural(&ProceduralMesh {
        columns_u: 4,
        columns_v: 4,
        ..Default::default()
    })
    .unwrap();
    let sim = HairMeshSim::new(wide, HairMeshParams::default(), None, 0.0).unwrap();
    assert!(
        sim.bundles.is_none(),
        "16 columns in one bundle: conjugate gradients"
    );
}

/// `solve` gives Δv = z + y with (S A S + I − S) y = S (b − A z) (a dense LU solve) within
/// `tol` relative, the constrained components as prescribed.
fn solves_the_filtered_system(
    name: &str,
    tol: f64,
    solve: impl Fn(&mut HairMeshSim, f64, &[DVec3], &[Filter], &[DVec3], &mut [DVec3]),
) {
    let h = 1.0 / 48.0;
    let (mut sim, b, filter) = assembled(h);
    let n = sim.x.len();
    let z: Vec<DVec3> = (0..n)
        .map(|i| match filter[i] {
            Filter::Fixed => DVec3::new(0.1, -0.2, 0.3),
            Filter::Plane(nrm) => 0.05 * nrm,
            Filter::Free => DVec3::ZERO,
        })
        .collect();
    let mut dv = vec![DVec3::ZERO; n];
    solve(&mut sim, h, &b, &filter, &z, &mut dv);
    let a = dense(&sim);
    let s_blocks: Vec<_> = filter.iter().map(|f| projector(*f)).collect();
    let mut rhs = flat(&b) - &a * flat(&z);
    for (i, s) in s_blocks.iter().enumerate() {
        let part: nalgebra::Vector3<f64> = rhs.fixed_rows::<3>(3 * i).into();
        rhs.fixed_rows_mut::<3>(3 * i).copy_from(&(s * part));
    }
    let full = dense_filtered(&sim, &filter, |_, _| true);
    let want = full.lu().solve(&rhs).unwrap() + flat(&z);
    let err = (flat(&dv) - &want).amax();
    assert!(err < tol * want.amax(), "{name} error {err} of {}", want.amax());
    for i in 0..n {
        let off = dv[i] - z[i];
        assert!(
            (off - filter[i].apply(off)).length() < 1e-12,
            "{name}: vertex {i} left its constraint"
        );
    }
}

/// Settling: without gravity the rest shape is an equilibrium of the loose moduli too, so the
/// settled rest shape is the built one; with gravity the mesh comes down, its roots stay, and
/// the solver then starts from the settled shape as its rest (no further sag to speak of).
#[test]
fn settling_moves_the_rest_shape_to_where_the_mesh_hangs() {
    let m = mesh();
    let still = HairMeshParams {
        gravity: 0.0,
        ..Default::default()
    };
    let (sim, moved) = HairMeshSim::settled(m.clone(), still, None, 0.0, 1.0 / 24.0).unwrap();
    assert!(moved < 1e-6, "moved {moved} cm without gravity");
    for (a, b) in sim.mesh.rest.iter().zip(&m.rest) {
        assert!(a.distance(*b) < 1e-5);
    }
    let params = HairMeshParams::default();
    let (mut sim, moved) = HairMeshSim::settled(m.clone(), params.clone(), None, 0.0, 1.0 / 24.0).unwrap();
    assert!(moved > 0.1, "settled only {moved} cm");
    let drop: f32 = sim
        .mesh
        .rest
        .iter()
        .zip(&m.rest)
        .map(|(a, b)| a.y - b.y)
        .sum::<f32>()
        / m.rest.len() as f32;
    assert!(drop < -0.1, "mean height change {drop} cm");
    for c in 0..m.columns() as u32 {
        let r = m.vertex(c, 0) as usize;
        assert_eq!(sim.mesh.rest[r], m.rest[r], "root of column {c}");
    }
    // The stiff solver around the settled shape: it sags far less than the settling moved it.
    sim.preroll(24, 1.0 / 24.0).unwrap();
    let after = sim.rest_error();
    assert!(
        after < 0.25 * moved,
        "sagged {after} cm more after settling {moved} cm"
    );
    // The unsettled mesh under the same solver sags more than the settled one.
    let mut raw = HairMeshSim::new(m, params, None, 0.0).unwrap();
    raw.preroll(24, 1.0 / 24.0).unwrap();
    assert!(raw.rest_error() > 2.0 * after, "{} vs {after}", raw.rest_error());
}
