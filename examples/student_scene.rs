//! Library use: write the student project's default scene (004's generator: 167 hairs of 8
//! particles on a unit-sphere head) as an `.mss` file; `examples/student.mss` is its output.
//!
//! `cargo run --release --example student_scene -- examples/student.mss`

use tress::scene::mss::Generator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "student.mss".into());
    let scene = Generator::default().scene()?;
    let text = format!(
        "# The student project's default scene (004), written by `cargo run --example student_scene`:\n\
         # 167 hairs x 8 particles 0.025 apart on the top of a unit-sphere head moving at 0.25 units/s along X.\n{}",
        scene.to_text()
    );
    std::fs::write(&path, text)?;
    println!(
        "{path}: {} particles, {} springs",
        scene.particles.len(),
        scene.springs.len()
    );
    Ok(())
}
