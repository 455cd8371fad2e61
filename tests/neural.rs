//! The neural interpolator (000): training lowers the loss and beats fixed uniform weights,
//! models and checkpoints round-trip, a resumed run equals an uninterrupted one, and the
//! interpolator works behind the upsampling seam.

mod common;

use burn::backend::{Autodiff, Flex, flex::FlexDevice};
use glam::{Quat, Vec3};
use tress::groom::{Groom, GroomParams, Style, generate};
use tress::guides::{GuideFrame, Interpolator};
use tress::neural::data::GridFrames;
use tress::neural::file::NeuralFile;
use tress::neural::grid::{GridSpec, UvGrid};
use tress::neural::interp::NeuralInterpolator;
use tress::neural::interp::carry::Blend;
use tress::neural::interp::train::{
    InterpConfig, StepReport, load_model, model_file, net_to_bytes, train, validate,
};

fn groom() -> Groom {
    generate(&GroomParams {
        strands: 400,
        points: 8,
        length: 12.0,
        ..GroomParams::for_style(Style::Straight)
    })
    .unwrap()
}

/// Each strand swings about its root by an angle that varies smoothly over the scalp and in time.
fn frame(g: &Groom, t: f32) -> Vec<Vec3> {
    let mut out = Vec::with_capacity(g.point_count());
    for s in g.strands() {
        let r = s[0];
        let q = Quat::from_rotation_x(0.6 * (0.7 * t + 0.15 * r.x).sin())
            * Quat::from_rotation_z(0.4 * (0.5 * t + 0.1 * r.z).cos());
        out.extend(s.iter().map(|p| r + q * (*p - r)));
    }
    out
}

fn config(steps: usize) -> InterpConfig {
    config_with(steps, Blend::Positions)
}

fn config_with(steps: usize, blend: Blend) -> InterpConfig {
    common::tiny_interp_config(steps, blend)
}

fn data(g: &Groom, cfg: &InterpConfig, t0: f32, n: usize) -> GridFrames {
    let mut d = GridFrames::new(UvGrid::new(g, cfg.grid).unwrap());
    for i in 0..n {
        d.push(&frame(g, t0 + 0.25 * i as f32));
    }
    d
}

type T = Autodiff<Flex>;

#[test]
fn training_lowers_the_loss_and_beats_uniform_weights() {
    // (`affine` candidates fit this smooth swing almost exactly before any training, so its
    // loss has little to fall: `carry::tests` checks them.)
    for blend in [Blend::Positions, Blend::Carried, Blend::Offsets] {
        training_lowers_the_loss_with(config_with(60, blend));
    }
    training_lowers_the_loss_with(learned(60, Blend::Offsets));
}

/// Each particle's share of its rest offset learned (`[net] learn_share`), centred on one half.
fn learned(steps: usize, blend: Blend) -> InterpConfig {
    let mut cfg = config_with(steps, blend);
    cfg.net.offset_share = 0.5;
    cfg.net.learn_share = true;
    cfg.validate().unwrap();
    cfg
}

fn training_lowers_the_loss_with(cfg: InterpConfig) {
    let g = groom();
    let space = cfg.net.space();
    let (tr, va) = (data(&g, &cfg, 0.0, 24), data(&g, &cfg, 40.0, 6));
    let dev = FlexDevice;
    let before = validate(
        &tress::neural::interp::train::init_net::<Flex>(&cfg, &dev),
        &va,
        3,
        space,
        &dev,
    );
    let mut losses = Vec::new();
    let out = train::<T>(
        &cfg,
        &tr,
        std::slice::from_ref(&va),
        &dev,
        None,
        &mut |r: &StepReport| {
            losses.push(r.total);
            true
        },
    )
    .unwrap();
    let (_, best) = out.progress.best.unwrap();
    let head: f32 = losses[..5].iter().sum::<f32>() / 5.0;
    let tail: f32 = losses[losses.len() - 5..].iter().sum::<f32>() / 5.0;
    assert!(tail < 0.7 * head, "{space:?}: loss {head} → {tail}");
    assert!(
        best.rmse_cm < before.rmse_cm,
        "{} vs untrained {}",
        best.rmse_cm,
        before.rmse_cm
    );
    // Learned weights must do better than averaging the 16 neighbourhood guides.
    assert!(
        best.rmse_cm < best.uniform_rmse_cm,
        "{} vs uniform {}",
        best.rmse_cm,
        best.uniform_rmse_cm
    );
}

/// The whole groom shifted about: a candidate carried in its guide's frame is the particle
/// shifted, so even untrained (uniform) weights are exact through the batch and validation
/// path, while blending the raw guide particles leaves each particle among guides centimetres
/// away.
#[test]
fn carried_candidates_are_exact_under_a_shift_where_raw_guides_need_learning() {
    let g = groom();
    let dev = FlexDevice;
    let uniform = |blend: Blend| {
        let cfg = config_with(1, blend);
        let mut va = GridFrames::new(UvGrid::new(&g, cfg.grid).unwrap());
        for i in 0..6 {
            let t = i as f32;
            let shift = Vec3::new(1.0, -0.5, 2.0 * (0.9 * t).sin()) * t;
            va.push(&g.points().iter().map(|p| *p + shift).collect::<Vec<_>>());
        }
        validate(
            &tress::neural::interp::train::init_net::<Flex>(&cfg, &dev),
            &va,
            3,
            blend.into(),
            &dev,
        )
        .uniform_rmse_cm
    };
    let (pos, car) = (uniform(Blend::Positions), uniform(Blend::Carried));
    assert!(car < 1e-2, "uniform weights, carried: {car} cm");
    let aff = uniform(Blend::Affine);
    assert!(aff < 1e-2, "uniform weights, affine: {aff} cm");
    assert!(pos > 0.5, "uniform weights, positions: {pos} cm");
}

#[test]
fn a_resumed_run_equals_an_uninterrupted_one_and_models_round_trip() {
    let g = groom();
    // Carried candidates with a learned share (`[net]` options, the latter a 17th output
    // channel) ride in the model file's config.
    let cfg = learned(10, Blend::Carried);
    let (tr, va) = (data(&g, &cfg, 0.0, 12), data(&g, &cfg, 40.0, 3));
    let dev = FlexDevice;
    let dir = std::env::temp_dir().join(format!("tress-neural-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a_ck, b_ck) = (dir.join("a.ckpt"), dir.join("b.ckpt"));
    let a = train::<T>(
        &cfg,
        &tr,
        std::slice::from_ref(&va),
        &dev,
        Some((&a_ck, false)),
        &mut |_| true,
    )
    .unwrap();
    // Interrupted after step 6 (between checkpoints), then resumed.
    let b1 = train::<T>(
        &cfg,
        &tr,
        std::slice::from_ref(&va),
        &dev,
        Some((&b_ck, false)),
        &mut |r| r.step < 6,
    )
    .unwrap();
    assert!(b1.stopped_early);
    assert_eq!(b1.progress.step, 6);
    let b = train::<T>(
        &cfg,
        &tr,
        std::slice::from_ref(&va),
        &dev,
        Some((&b_ck, true)),
        &mut |_| true,
    )
    .unwrap();
    assert_eq!(b.progress.step, 10);
    assert_eq!(net_to_bytes(&a.net), net_to_bytes(&b.net));
    assert_eq!(a.progress.history, b.progress.history);
    // The same training again gives the same bytes (seeded, ids numbered in order).
    let a2 = train::<T>(&cfg, &tr, std::slice::from_ref(&va), &dev, None, &mut |_| true).unwrap();
    assert_eq!(net_to_bytes(&a.net), net_to_bytes(&a2.net));

    // Model file round trip: same outputs through the seam.
    let path = dir.join("m.tnn");
    model_file(&cfg, &a.net, serde_json::json!({}))
        .write(&path)
        .unwrap();
    let (cfg2, net2, header) = load_model::<Flex>(&path, &dev).unwrap();
    assert_eq!(cfg2, cfg);
    assert_eq!(header["kind"], "interp");
    let mut i1 = NeuralInterpolator::new(&g, &cfg, a.net.clone(), dev).unwrap();
    let mut i2 = NeuralInterpolator::new(&g, &cfg2, net2, dev).unwrap();
    let full = frame(&g, 3.0);
    let guides = i1.layout().extract(&full);
    let pose = tress::motion::Pose::default();
    let f = GuideFrame {
        frame: 1.0,
        time: 0.0,
        guides: &guides,
        pose: &pose,
        colliders: None,
    };
    let mut o1 = vec![Vec3::ZERO; g.point_count()];
    let mut o2 = o1.clone();
    i1.interpolate(&f, &mut o1).unwrap();
    i2.interpolate(&f, &mut o2).unwrap();
    assert_eq!(o1, o2);
    // Guides keep their simulated positions; every strand stays rooted where it was.
    for &s in i1.guide_strands() {
        let r = g.offsets()[s]..g.offsets()[s + 1];
        assert_eq!(&o1[r.clone()], &full[r]);
    }
    for s in 0..g.strand_count() {
        let p = g.offsets()[s];
        assert!(o1[p].distance(full[p]) < 1e-3, "strand {s} root moved");
        // Every strand keeps its rest length, segment by segment (the groom's own rest).
        let (rest, now) = (g.strand(s), &o1[p..g.offsets()[s + 1]]);
        for i in 1..rest.len() {
            let (a, b) = (rest[i].distance(rest[i - 1]), now[i].distance(now[i - 1]));
            assert!(
                (a - b).abs() <= 1e-4 * a.max(1.0),
                "strand {s} segment {i}: {b} vs rest {a}"
            );
        }
    }
    // Corrupt files are errors, not panics.
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0, 8, bytes.len() / 2, bytes.len() - 1] {
        assert!(NeuralFile::parse(&bytes[..cut], &path).is_err());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn initialisations_racing_on_threads_give_the_same_weights() {
    // Burn's generator is process-wide: trainings started side by side (parallel tests, a
    // batch) must still draw the same initial weights for the same seed.
    let cfg = config(1);
    let dev = FlexDevice;
    let reference = net_to_bytes(&tress::neural::interp::train::init_net::<Flex>(&cfg, &dev));
    let results: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..4)
                        .map(|_| net_to_bytes(&tress::neural::interp::train::init_net::<Flex>(&cfg, &dev)))
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in results.iter().flatten() {
        assert!(
            r == &reference,
            "an initialisation raced with another and drew other weights"
        );
    }
}

// ---- The fine-scale displacement generator (000 §4.3) ----

use tress::neural::displace::DisplaceOptions;
use tress::neural::displace::train::{
    DisplaceStep, load_generator, train as train_displace, validate as validate_displace, with_generator,
};

/// A grid big enough for the discriminator (crops of 16 cells), W_θ left untrained (its
/// interpolation is poor: there is a residual to learn).
fn displace_setup(steps: usize, adversarial: f64, data: f64) -> (Groom, InterpConfig, DisplaceOptions) {
    let g = generate(&GroomParams {
        strands: 900,
        points: 8,
        length: 12.0,
        ..GroomParams::for_style(Style::Straight)
    })
    .unwrap();
    let mut cfg = config(0);
    cfg.grid = GridSpec {
        n: 20,
        stride: 4,
        points: 8,
    };
    let o = DisplaceOptions {
        steps,
        channels: 8,
        critic_channels: 4,
        critic_steps: 2,
        lr: 3e-3,
        generator_lr: None,
        adversarial,
        data,
        seed: 3,
        validate_every: 5,
        checkpoint_every: 4,
        max_minutes: None,
    };
    (g, cfg, o)
}

#[test]
fn the_displacement_generator_learns_what_the_interpolator_misses() {
    let (g, cfg, o) = displace_setup(40, 0.01, 1.0);
    let (tr, va) = (data(&g, &cfg, 0.0, 16), data(&g, &cfg, 40.0, 6));
    let dev = FlexDevice;
    let w = tress::neural::interp::train::init_net::<Flex>(&cfg, &dev);
    let out = train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, None, &mut |_: &DisplaceStep| true).unwrap();
    let (_, v) = out.progress.best.unwrap();
    // F_β sees only the guides and the rest features, not W_θ's output: lowering the error
    // means it learned the residual from the guides.
    assert!(
        v.rmse_cm < 0.8 * v.interp_rmse_cm,
        "with displacement {} cm, interpolator alone {} cm",
        v.rmse_cm,
        v.interp_rmse_cm
    );
    assert!(v.displacement_rms_cm > 0.1 * (v.interp_rmse_cm - v.rmse_cm));
}

#[test]
fn the_critic_learns_to_tell_generated_hair_from_simulated_hair() {
    // With the generator held still (its learning rate 0), D_γ faces a fixed task: its loss
    // must fall from log 4 (a coin toss) if its gradients reach it.
    let (g, cfg, mut o) = displace_setup(80, 0.01, 1.0);
    o.generator_lr = Some(0.0);
    let (tr, va) = (data(&g, &cfg, 0.0, 16), data(&g, &cfg, 40.0, 3));
    let dev = FlexDevice;
    let w = tress::neural::interp::train::init_net::<Flex>(&cfg, &dev);
    let mut critic = Vec::new();
    train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, None, &mut |r: &DisplaceStep| {
        critic.push(r.critic);
        true
    })
    .unwrap();
    // The first step's two updates start near a coin toss (log 4 ≈ 1.39 at D ≈ 0).
    let head = critic[0];
    let tail = critic[critic.len() - 3..].iter().sum::<f32>() / 3.0;
    assert!(head > 1.0 && head < 1.6, "first critic loss {head}");
    // Measured: 1.38 → 0.39 in 80 steps; a critic whose gradients did not reach it would stay
    // at log 4.
    assert!(tail < 0.4 * head, "critic loss {head} → {tail}");
}

#[test]
fn displacement_training_resumes_to_the_same_bytes_and_rides_in_the_model_file() {
    let (g, cfg, o) = displace_setup(10, 0.01, 1.0);
    let (tr, va) = (data(&g, &cfg, 0.0, 12), data(&g, &cfg, 40.0, 3));
    let dev = FlexDevice;
    let w = tress::neural::interp::train::init_net::<Flex>(&cfg, &dev);
    let dir = std::env::temp_dir().join(format!("tress-displace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a_ck, b_ck) = (dir.join("a.ckpt"), dir.join("b.ckpt"));
    let a = train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, Some((&a_ck, false)), &mut |_| true).unwrap();
    let b1 = train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, Some((&b_ck, false)), &mut |r| {
        r.step < 6
    })
    .unwrap();
    assert!(b1.stopped_early);
    let b = train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, Some((&b_ck, true)), &mut |_| true).unwrap();
    let bytes =
        |f: &tress::neural::displace::model::DisplaceNet<Flex>| tress::neural::file::module_to_bytes(f);
    assert_eq!(bytes(&a.fnet), bytes(&b.fnet));
    assert_eq!(a.progress.history, b.progress.history);
    // Other options refuse the checkpoint.
    let other = DisplaceOptions {
        critic_steps: 1,
        ..o.clone()
    };
    assert!(
        train_displace::<T>(&cfg, &other, &w, &tr, &va, &dev, Some((&b_ck, true)), &mut |_| {
            true
        })
        .is_err()
    );
    // So does a checkpoint trained against another interpolator.
    let mut cfg2 = cfg.clone();
    cfg2.train.seed = 99;
    let w2 = tress::neural::interp::train::init_net::<Flex>(&cfg2, &dev);
    let e = train_displace::<T>(&cfg, &o, &w2, &tr, &va, &dev, Some((&b_ck, true)), &mut |_| true)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("another interpolator"), "{e}");

    // In the model file: loaded with the interpolator, it moves the output by Δs; without it the
    // output is the interpolator's alone.
    let path = dir.join("m.tnn");
    let model = model_file(&cfg, &w, serde_json::json!({}));
    with_generator(model, &o, &a.fnet, serde_json::json!({}))
        .write(&path)
        .unwrap();
    let f = NeuralFile::read(&path).unwrap();
    let loaded = load_generator::<Flex>(&f, &cfg, &dev, &path).unwrap().unwrap();
    assert_eq!(bytes(&loaded), bytes(&a.fnet));
    let mut with = NeuralInterpolator::<Flex>::load(&path, &g, dev).unwrap();
    assert!(with.has_displacement());
    let mut without = NeuralInterpolator::<Flex>::load(&path, &g, dev)
        .unwrap()
        .without_displacement();
    let full = frame(&g, 3.0);
    let guides = with.layout().extract(&full);
    let pose = tress::motion::Pose::default();
    let gf = GuideFrame {
        frame: 1.0,
        time: 0.0,
        guides: &guides,
        pose: &pose,
        colliders: None,
    };
    let mut o1 = vec![Vec3::ZERO; g.point_count()];
    let mut o2 = o1.clone();
    with.interpolate(&gf, &mut o1).unwrap();
    without.interpolate(&gf, &mut o2).unwrap();
    let moved = o1.iter().zip(&o2).filter(|(a, b)| a.distance(**b) > 1e-4).count();
    assert!(
        moved > g.point_count() / 4,
        "{moved} of {} points moved",
        g.point_count()
    );
    let v = validate_displace(&w, &a.fnet, &va, 3, Blend::Positions.into(), &dev);
    assert!(v.displacement_rms_cm > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn displacement_training_gives_the_same_bytes_on_one_and_two_threads() {
    let (g, cfg, o) = displace_setup(6, 0.01, 1.0);
    let (tr, va) = (data(&g, &cfg, 0.0, 12), data(&g, &cfg, 40.0, 3));
    let dev = FlexDevice;
    let w = tress::neural::interp::train::init_net::<Flex>(&cfg, &dev);
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let t = train_displace::<T>(&cfg, &o, &w, &tr, &va, &dev, None, &mut |_| true).unwrap();
                (tress::neural::file::module_to_bytes(&t.fnet), t.progress.history)
            })
    };
    let (a, b) = (on(1), on(2));
    assert!(
        a.0 == b.0,
        "the generator's weights differ between 1 and 2 threads"
    );
    assert_eq!(a.1, b.1);
}
