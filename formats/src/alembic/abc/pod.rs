//! Plain-old-data types of Alembic properties (AbcCoreAbstract `PlainOldDataType`).

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Pod {
    Bool = 0,
    U8 = 1,
    I8 = 2,
    U16 = 3,
    I16 = 4,
    U32 = 5,
    I32 = 6,
    U64 = 7,
    I64 = 8,
    F16 = 9,
    F32 = 10,
    F64 = 11,
    String = 12,
    WString = 13,
}

impl Pod {
    pub fn from_u8(v: u8) -> Result<Pod> {
        use Pod::*;
        Ok(match v {
            0 => Bool,
            1 => U8,
            2 => I8,
            3 => U16,
            4 => I16,
            5 => U32,
            6 => I32,
            7 => U64,
            8 => I64,
            9 => F16,
            10 => F32,
            11 => F64,
            12 => String,
            13 => WString,
            _ => {
                return Err(Error::corrupt(format!(
                    "unknown POD type {v} in a property header"
                )));
            }
        })
    }

    /// Bytes per value; strings are variable (0 here).
    pub fn size(self) -> usize {
        use Pod::*;
        match self {
            Bool | U8 | I8 => 1,
            U16 | I16 | F16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
            String | WString => 0,
        }
    }

    pub fn is_string(self) -> bool {
        matches!(self, Pod::String | Pod::WString)
    }

    /// The `podName` written in geometry-parameter metadata.
    pub fn name(self) -> &'static str {
        use Pod::*;
        match self {
            Bool => "bool_t",
            U8 => "uint8_t",
            I8 => "int8_t",
            U16 => "uint16_t",
            I16 => "int16_t",
            U32 => "uint32_t",
            I32 => "int32_t",
            U64 => "uint64_t",
            I64 => "int64_t",
            F16 => "float16_t",
            F32 => "float32_t",
            F64 => "float64_t",
            String => "string",
            WString => "wstring",
        }
    }
}
