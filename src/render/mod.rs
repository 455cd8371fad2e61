//! Preview pictures: a software strand rasterizer. Strands are drawn as thin lines with depth,
//! shaded with the Kajiya–Kay hair model; colliders (analytic shapes and distance grids alike)
//! are drawn by sphere tracing their distance fields. Supersampled for anti-aliasing. Fast
//! enough to preview every few frames of a job; deterministic (same inputs, same pixels).

pub mod camera;
pub mod canvas;
pub mod font;
pub mod frame;
pub mod heat;
pub mod plot;
pub mod preview;
pub mod shade;
pub mod sheet;
pub mod solid;

pub use camera::{Camera, View};
pub use canvas::Canvas;
pub use frame::{Coloring, FrameStyle, render_frame};
pub use sheet::contact_sheet;
