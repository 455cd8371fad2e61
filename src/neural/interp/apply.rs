//! The neural interpolator behind the upsampling seam: each frame, the guides go onto the uv grid,
//! W_θ predicts ω (000 Eq. 2), L blends the 16 neighbourhood guides (Eq. 3, on the CPU; as they
//! are or carrying the particle's rest offset, [`super::carry`]), and the grid comes
//! back to the groom's strands ([`crate::neural::grid::UvGrid::scatter`]). The rest features are
//! computed once. Guides keep their simulated positions; every other strand gets its rest segment
//! lengths back by follow-the-leader ([`crate::sim::inextensible`]). A model with a fine-scale
//! displacement generator (000 §4.3, [`crate::neural::displace`]) adds Δs = F_β(s̄*, g) (Eq. 9)
//! to the grid before the transfer back, unless it is switched off
//! ([`NeuralInterpolator::without_displacement`], the ablation row).

use std::time::{Duration, Instant};

use burn::prelude::*;
use glam::Vec3;

use super::carry::{Space, blend_frame};
use super::model::{NEIGHBORS, RestFeatures, WeightNet, neighbour};
use super::train::InterpConfig;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::{GuideFrame, GuideLayout, InterpTimes, Interpolator};
use crate::neural::data::channels_first;
use crate::neural::grid::UvGrid;

/// The CPU inference backend.
pub type Cpu = burn::backend::Flex;

pub struct NeuralInterpolator<B: Backend = Cpu> {
    layout: GuideLayout,
    grid: UvGrid,
    net: WeightNet<B>,
    rest: RestFeatures<B>,
    /// F_β, when the model has one and it is used.
    displace: Option<crate::neural::displace::model::DisplaceNet<B>>,
    dev: B::Device,
    /// Layout slot of guide (i, j), row-major.
    guide_slots: Vec<usize>,
    /// The last frame's ω `[16, n, n, w]`, read back for the blend (what
    /// [`Interpolator::weights`] gives).
    last: Option<Vec<f32>>,
    /// Rest segment lengths per particle (inextensibility after the transfer back).
    segments: Vec<f32>,
    /// What L blends, and the rest grid and rest guides (network units) it carries from.
    space: Space,
    rest_net: Vec<f32>,
    rest_guides: Vec<f32>,
    time: Duration,
    phases: FramePhases,
}

/// Where a frame's time went, summed over the frames interpolated: the guides resampled onto
/// the guide lattice and sent to the device; W_θ run and ω read back (on a GPU the wait for
/// its kernels falls here); Eq. 3's blend on the CPU; F_β's displacement (run and read back);
/// the grid transferred back to the strands with their lengths restored.
#[derive(Clone, Copy, Debug, Default)]
pub struct FramePhases {
    pub frames: usize,
    pub guides: Duration,
    pub network: Duration,
    pub blend: Duration,
    pub displacement: Duration,
    pub transfer: Duration,
}

impl<B: Backend> NeuralInterpolator<B> {
    /// The interpolator for `groom` (rest, head frame) with a trained network. Its guides are
    /// the grid's ([`UvGrid::guide_strands`]).
    pub fn new(groom: &Groom, cfg: &InterpConfig, net: WeightNet<B>, dev: B::Device) -> Result<Self> {
        let grid = UvGrid::new(groom, cfg.grid)?;
        let guides = grid.guide_strands();
        let layout = GuideLayout::new(groom, &guides)?;
        let m = cfg.grid.guides_per_side();
        let guide_slots = (0..m)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .map(|(i, j)| {
                let s = grid.source[grid.guide_cell(i, j, 0, 0)] as usize;
                layout.slot(s).expect("guide strands are in the layout")
            })
            .collect();
        let (n, w) = (cfg.grid.n, cfg.grid.points);
        let rest: Vec<f32> = grid.rest.iter().flat_map(|p| grid.to_net(*p)).collect();
        let rest_guides: Vec<f32> = (0..m)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .flat_map(|(i, j)| {
                let c = grid.guide_cell(i, j, 0, 0);
                rest[c * w * 3..(c + 1) * w * 3].to_vec()
            })
            .collect();
        let rest_net = rest.clone();
        let rest_t = Tensor::<B, 5>::from_data(TensorData::new(rest, [1, n, n, w, 3]), &dev);
        let rest = net.rest_features(channels_first(rest_t));
        Ok(NeuralInterpolator {
            grid,
            net,
            rest,
            displace: None,
            dev,
            guide_slots,
            last: None,
            segments: crate::sim::inextensible::rest_segments(&layout.rest, &layout.counts),
            layout,
            space: cfg.net.space(),
            rest_net,
            rest_guides,
            time: Duration::ZERO,
            phases: FramePhases::default(),
        })
    }

    /// The interpolator of a model file (`.tnn`) for `groom`.
    /// With the model's displacement generator, when it has one.
    pub fn load(path: &std::path::Path, groom: &Groom, dev: B::Device) -> Result<Self> {
        let (cfg, net, _) = super::train::load_model::<B>(path, &dev)?;
        let f = crate::neural::file::NeuralFile::read(path)?;
        let gen_f = crate::neural::displace::train::load_generator::<B>(&f, &cfg, &dev, path)?;
        let mut n = NeuralInterpolator::new(groom, &cfg, net, dev)?;
        n.displace = gen_f;
        Ok(n)
    }

    /// Adds F_β's displacement to every frame (000 §4.3).
    pub fn with_displacement(mut self, f: crate::neural::displace::model::DisplaceNet<B>) -> Self {
        self.displace = Some(f);
        self
    }

    /// W_θ and Eq. 3 alone (000 Table 1's "w/o fine-scale displacement").
    pub fn without_displacement(mut self) -> Self {
        self.displace = None;
        self
    }

    /// Where the frames' time went so far ([`FramePhases`]).
    pub fn phases(&self) -> FramePhases {
        self.phases
    }

    /// Whether frames get F_β's displacement.
    pub fn has_displacement(&self) -> bool {
        self.displace.is_some()
    }

    pub fn grid(&self) -> &UvGrid {
        &self.grid
    }

    /// Guides that must be simulated (groom strand indices, increasing).
    pub fn guide_strands(&self) -> &[usize] {
        &self.layout.guides
    }

    /// The guides of one frame (head frame, slot order) on the guide lattice `[m, m, w, 3]`,
    /// network units.
    fn guide_grid(&self, guides: &[Vec3]) -> Vec<f32> {
        let spec = self.grid.spec;
        let (m, w) = (spec.guides_per_side(), spec.points);
        let mut g = Vec::with_capacity(m * m * w * 3);
        let mut tmp = Vec::with_capacity(w);
        for &slot in &self.guide_slots {
            tmp.clear();
            let s = self.layout.guides[slot];
            self.grid
                .resample_strand(s, self.layout.guide(slot, guides), &mut tmp);
            g.extend(tmp.iter().flat_map(|p| self.grid.to_net(*p)));
        }
        g
    }

    /// The grid after Eq. 3 for one frame of guides (head frame, slot order), network units.
    fn grid_frame(&mut self, guides: &[Vec3]) -> Vec<f32> {
        let spec = self.grid.spec;
        let (m, w) = (spec.guides_per_side(), spec.points);
        let t = Instant::now();
        let flat = self.guide_grid(guides);
        let g = Tensor::<B, 5>::from_data(TensorData::new(flat.clone(), [1, m, m, w, 3]), &self.dev);
        let t1 = Instant::now();
        let pr = self.net.predict(&self.rest, channels_first(g.clone()));
        // Eq. 3 on the CPU from ω (and a learned share's λ_p) read back: the same blend as the
        // tensors', without their 16 strided copies of the grid (`carry::blend_frame`).
        let omega: Vec<f32> = pr.omega.into_data().to_vec().expect("f32");
        let shares: Option<Vec<f32>> = pr.share.map(|l| l.into_data().to_vec().expect("f32"));
        let t2 = Instant::now();
        let mut s = blend_frame(
            self.space,
            &omega,
            shares.as_deref(),
            &flat,
            spec.n,
            spec.stride,
            w,
            &self.rest_net,
            &self.rest_guides,
        );
        let t3 = Instant::now();
        if let Some(f) = &self.displace {
            let d: Vec<f32> = f
                .forward(self.rest.coarse.clone(), channels_first(g))
                .permute([0, 2, 3, 4, 1])
                .into_data()
                .to_vec()
                .expect("f32");
            for (x, dx) in s.iter_mut().zip(d) {
                *x += dx;
            }
        }
        let p = &mut self.phases;
        p.frames += 1;
        p.guides += t1 - t;
        p.network += t2 - t1;
        p.blend += t3 - t2;
        if self.displace.is_some() {
            p.displacement += t3.elapsed();
        }
        self.last = Some(omega);
        s
    }
}

/// A model file's interpolator loaded onto a device ([`crate::neural::device::DeviceKind::run`]),
/// with or without its fine-scale displacement generator.
pub struct Load<'a> {
    pub path: &'a std::path::Path,
    pub groom: &'a Groom,
    pub displacement: bool,
}

/// A loaded neural interpolator behind the upsampling seam, and its uv-grid guides.
pub struct Loaded {
    pub interp: Box<dyn Interpolator>,
    pub guides: Vec<usize>,
}

impl crate::neural::device::OnDevice for Load<'_> {
    type Output = Loaded;
    fn run<AB: burn::tensor::backend::AutodiffBackend>(self, dev: AB::Device) -> Result<Loaded> {
        let n = NeuralInterpolator::<AB::InnerBackend>::load(self.path, self.groom, dev)?;
        let n = if self.displacement {
            n
        } else {
            n.without_displacement()
        };
        Ok(Loaded {
            guides: n.guide_strands().to_vec(),
            interp: Box::new(n),
        })
    }
}

impl<B: Backend> Interpolator for NeuralInterpolator<B>
where
    B::Device: Send + Sync,
{
    fn layout(&self) -> &GuideLayout {
        &self.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        self.layout.check_frame(frame.guides)?;
        if out.len() != self.layout.rest.len() {
            return Err(Error::Invalid("output frame has the wrong size".into()));
        }
        let t0 = Instant::now();
        let net = self.grid_frame(frame.guides);
        let t1 = Instant::now();
        let cells: Vec<Vec3> = net
            .chunks_exact(3)
            .map(|p| self.grid.from_net([p[0], p[1], p[2]]))
            .collect();
        let (grid, segments, offsets) = (&self.grid, &self.segments, &self.layout.offsets);
        self.layout.fill(frame.guides, out, |s, dst| {
            grid.scatter_strand(s, &cells, dst);
            crate::sim::inextensible::follow_the_leader(dst, &segments[offsets[s]..offsets[s + 1]]);
        });
        self.phases.transfer += t1.elapsed();
        self.time += t0.elapsed();
        Ok(())
    }

    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
        let Some(omega) = &self.last else {
            return;
        };
        if self.layout.is_guide(s) {
            return;
        }
        let spec = self.grid.spec;
        let (n, w, k, m) = (spec.n, spec.points, spec.stride, spec.guides_per_side());
        let count = self.layout.counts[s] as usize;
        let first = self.layout.offsets[s];
        let mut acc: Vec<(u32, Vec<f32>)> = Vec::new();
        for (c, b) in self.grid.back_cells(s) {
            let (a, bb) = (c as usize / n, c as usize % n);
            for q in 0..NEIGHBORS {
                let (di, dj) = (q / 4, q % 4);
                let (gi, gj) = (neighbour(a, di, k, m), neighbour(bb, dj, k, m));
                let slot = self.guide_slots[gi * m + gj] as u32;
                let e = match acc.iter_mut().position(|(g, _)| *g == slot) {
                    Some(i) => &mut acc[i].1,
                    None => {
                        acc.push((slot, vec![0.0; count]));
                        &mut acc.last_mut().expect("pushed").1
                    }
                };
                for (i, v) in e.iter_mut().enumerate() {
                    let wi = (self.grid.fraction(first + i) * (w - 1) as f32).round() as usize;
                    *v += b * omega[q * n * n * w + c as usize * w + wi];
                }
            }
        }
        acc.sort_by_key(|(g, _)| *g);
        out.extend(acc);
    }

    fn candidates(&self, s: usize, out: &mut Vec<u32>) {
        out.clear();
        if self.layout.is_guide(s) {
            return;
        }
        let spec = self.grid.spec;
        let (n, k, m) = (spec.n, spec.stride, spec.guides_per_side());
        for (c, _) in self.grid.back_cells(s) {
            let (a, b) = (c as usize / n, c as usize % n);
            for q in 0..NEIGHBORS {
                let (gi, gj) = (neighbour(a, q / 4, k, m), neighbour(b, q % 4, k, m));
                out.push(self.guide_slots[gi * m + gj] as u32);
            }
        }
        out.sort_unstable();
        out.dedup();
    }

    fn times(&self) -> InterpTimes {
        InterpTimes {
            interpolation: self.time,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural::interp::train::init_net;

    /// 001 Eq. 5's weights of the neural interpolator (what the two-way correction solves with)
    /// are ω of the frame just interpolated: each strand's weight per guide and particle equals
    /// the sum, over its back cells and the neighbours naming that guide, of ω computed again
    /// by the network on the same guides and read through the tensor's own layout; and they sum
    /// to 1 at every particle (softmax, back cells' weights summing to 1).
    #[test]
    fn the_weights_are_the_frames_omega() {
        let cfg = InterpConfig::load("interp_small").unwrap();
        let groom = crate::scene::load_groom("wavy", &crate::groom::Transform::default(), Some(300))
            .unwrap()
            .groom;
        let dev = Default::default();
        let mut n = NeuralInterpolator::<Cpu>::new(&groom, &cfg, init_net::<Cpu>(&cfg, &dev), dev).unwrap();
        // The rest guides swung about their roots, more at the tips.
        let rest = n.layout().extract(groom.points());
        let guides: Vec<Vec3> = rest
            .iter()
            .enumerate()
            .map(|(i, p)| *p + Vec3::new(0.3 * (i % 7) as f32, 0.0, -0.2 * (i % 5) as f32))
            .collect();
        let pose = crate::motion::Pose::default();
        let mut out = vec![Vec3::ZERO; groom.point_count()];
        n.interpolate(
            &GuideFrame {
                frame: 1.0,
                time: 1.0 / 24.0,
                guides: &guides,
                pose: &pose,
                colliders: None,
            },
            &mut out,
        )
        .unwrap();
        let spec = n.grid.spec;
        let (m, w, k, side) = (spec.guides_per_side(), spec.points, spec.stride, spec.n);
        let g = Tensor::<Cpu, 5>::from_data(
            TensorData::new(n.guide_grid(&guides), [1, m, m, w, 3]),
            &Default::default(),
        );
        // ω as [cell][w][16].
        let omega: Vec<f32> = n
            .net
            .weights(&n.rest, channels_first(g))
            .permute([0, 2, 3, 4, 1])
            .into_data()
            .to_vec()
            .unwrap();
        let mut checked = 0;
        let mut weights = Vec::new();
        for s in 0..groom.strand_count() {
            n.weights(s, &mut weights);
            if n.layout.is_guide(s) {
                assert!(weights.is_empty());
                continue;
            }
            let first = n.layout.offsets[s];
            for i in 0..n.layout.counts[s] as usize {
                let wi = (n.grid.fraction(first + i) * (w - 1) as f32).round() as usize;
                let mut want: Vec<(u32, f32)> = Vec::new();
                for (c, b) in n.grid.back_cells(s) {
                    let (a, bb) = (c as usize / side, c as usize % side);
                    for q in 0..NEIGHBORS {
                        let gi = ((a / k) as i64 - 1 + (q / 4) as i64).clamp(0, m as i64 - 1) as usize;
                        let gj = ((bb / k) as i64 - 1 + (q % 4) as i64).clamp(0, m as i64 - 1) as usize;
                        let slot = n.guide_slots[gi * m + gj] as u32;
                        let v = b * omega[(c as usize * w + wi) * NEIGHBORS + q];
                        match want.iter_mut().find(|(g, _)| *g == slot) {
                            Some(e) => e.1 += v,
                            None => want.push((slot, v)),
                        }
                    }
                }
                let total: f32 = weights.iter().map(|(_, v)| v[i]).sum();
                assert!((total - 1.0).abs() < 1e-4, "strand {s} particle {i}: {total}");
                for (g, v) in &want {
                    let got = weights.iter().find(|(h, _)| h == g).map(|(_, v)| v[i]);
                    assert!(
                        got.is_some_and(|x| (x - v).abs() < 1e-5),
                        "strand {s} guide {g}: {got:?} vs {v}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// The phases of a frame are disjoint parts of it: they count every frame once, each is
    /// timed, and together they fit in the interpolation time the seam reports (which wraps
    /// them). Without F_β its phase stays zero.
    #[test]
    fn the_frame_phases_are_parts_of_the_frame() {
        let cfg = InterpConfig::load("interp_small").unwrap();
        let groom = crate::scene::load_groom("straight", &crate::groom::Transform::default(), Some(300))
            .unwrap()
            .groom;
        let dev = Default::default();
        let mut n = NeuralInterpolator::<Cpu>::new(&groom, &cfg, init_net::<Cpu>(&cfg, &dev), dev).unwrap();
        let guides = n.layout().extract(groom.points());
        let pose = crate::motion::Pose::default();
        let mut out = vec![Vec3::ZERO; groom.point_count()];
        for f in 0..3 {
            let frame = GuideFrame {
                frame: f as f64,
                time: f as f64 / 24.0,
                guides: &guides,
                pose: &pose,
                colliders: None,
            };
            n.interpolate(&frame, &mut out).unwrap();
        }
        let p = n.phases();
        assert_eq!(p.frames, 3);
        for (name, d) in [
            ("guides", p.guides),
            ("network", p.network),
            ("blend", p.blend),
            ("transfer", p.transfer),
        ] {
            assert!(d > Duration::ZERO, "{name} not timed");
        }
        assert_eq!(p.displacement, Duration::ZERO);
        let sum = p.guides + p.network + p.blend + p.transfer + p.displacement;
        assert!(
            sum <= n.times().interpolation,
            "{sum:?} > {:?}",
            n.times().interpolation
        );
    }
}
