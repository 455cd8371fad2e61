//! Upsampling: the whole groom from a few simulated guide strands, by any method. Above the
//! modules that implement the methods (`guides`: IDW and skinning, 001; `neural`: the
//! interpolation network, 000, and the drape, 003; `hairmesh`: 002), behind one seam
//! ([`crate::guides::Interpolator`]):
//!
//! - [`method`]: the methods, by the ids job files, reports and the command line use;
//! - [`factory`]: one factory, which loads a method's model once and checks its guides;
//! - [`frame_loop`]: the one frame loop (head frame in and out, collision projection, sinks).

pub mod factory;
pub mod frame_loop;
pub mod method;

pub use factory::{Model, Options, interpolator};
pub use frame_loop::{UpsampleTimes, Upsampler};
pub use method::Method;
