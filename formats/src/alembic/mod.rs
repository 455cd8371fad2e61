//! Alembic (Ogawa) in pure Rust, in three layers: [`ogawa`] (the container), [`abc`] (objects,
//! properties, samples, hashes) and [`schema`] (curves, xforms, polymeshes), with the hair-cache
//! API of [`cache`] on top. Files are read and written the way the official C++ library
//! (1.8.12) does, and checked against it in the tests.

pub mod abc;
pub mod cache;
pub mod ogawa;
pub mod schema;
