//! The Alembic object/property layer over Ogawa (AbcCoreOgawa): archive metadata, time
//! samplings, the indexed-metadata table, objects, compound / scalar / array properties,
//! sample digests, archive-wide de-duplication of samples and the hierarchy hashes.

pub mod copy;
pub mod hash;
pub mod header;
pub mod metadata;
pub mod pod;
pub mod read;
pub mod time;
pub mod write;

pub use header::{PropertyHeader, PropertyKind};
pub use metadata::MetaData;
pub use pod::Pod;
pub use read::{Archive, Compound, Object, Property};
pub use time::{TimeSampling, TimeSamplingKind};
