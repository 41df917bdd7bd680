//! ggml tensor types (block size and bytes per block) and llama.cpp file types, as numbered in
//! ggml/include/ggml.h `enum ggml_type` and include/llama.h `enum llama_ftype`. Only the table is
//! here: it lets the GGUF reader size tensor data from tensor infos without touching the data.

/// Elements per block and bytes per block of a ggml tensor type, with its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlTypeInfo {
    pub name: &'static str,
    pub block_elems: u64,
    pub block_bytes: u64,
}

const fn t(name: &'static str, block_elems: u64, block_bytes: u64) -> Option<GgmlTypeInfo> {
    Some(GgmlTypeInfo {
        name,
        block_elems,
        block_bytes,
    })
}

/// The type's block geometry, or `None` for ids that were removed from ggml or are newer than
/// this table (the caller then falls back to the data-section size).
///
/// Block sizes follow ggml-common.h (`block_q4_K` is 2+2+12+128 = 144 bytes per 256 weights,
/// and so on); ids 4, 5, 31–33 and 36–38 are types ggml removed.
pub fn ggml_type_info(id: u32) -> Option<GgmlTypeInfo> {
    match id {
        0 => t("F32", 1, 4),
        1 => t("F16", 1, 2),
        2 => t("Q4_0", 32, 18),
        3 => t("Q4_1", 32, 20),
        6 => t("Q5_0", 32, 22),
        7 => t("Q5_1", 32, 24),
        8 => t("Q8_0", 32, 34),
        9 => t("Q8_1", 32, 36),
        10 => t("Q2_K", 256, 84),
        11 => t("Q3_K", 256, 110),
        12 => t("Q4_K", 256, 144),
        13 => t("Q5_K", 256, 176),
        14 => t("Q6_K", 256, 210),
        15 => t("Q8_K", 256, 292),
        16 => t("IQ2_XXS", 256, 66),
        17 => t("IQ2_XS", 256, 74),
        18 => t("IQ3_XXS", 256, 98),
        19 => t("IQ1_S", 256, 50),
        20 => t("IQ4_NL", 32, 18),
        21 => t("IQ3_S", 256, 110),
        22 => t("IQ2_S", 256, 82),
        23 => t("IQ4_XS", 256, 136),
        24 => t("I8", 1, 1),
        25 => t("I16", 1, 2),
        26 => t("I32", 1, 4),
        27 => t("I64", 1, 8),
        28 => t("F64", 1, 8),
        29 => t("IQ1_M", 256, 56),
        30 => t("BF16", 1, 2),
        34 => t("TQ1_0", 256, 54),
        35 => t("TQ2_0", 256, 66),
        39 => t("MXFP4", 32, 17),
        _ => None,
    }
}

/// Name of a `general.file_type` value (`llama_ftype`), e.g. 15 → `MOSTLY_Q4_K_M`.
pub fn llama_ftype_name(id: u64) -> Option<&'static str> {
    Some(match id {
        0 => "ALL_F32",
        1 => "MOSTLY_F16",
        2 => "MOSTLY_Q4_0",
        3 => "MOSTLY_Q4_1",
        7 => "MOSTLY_Q8_0",
        8 => "MOSTLY_Q5_0",
        9 => "MOSTLY_Q5_1",
        10 => "MOSTLY_Q2_K",
        11 => "MOSTLY_Q3_K_S",
        12 => "MOSTLY_Q3_K_M",
        13 => "MOSTLY_Q3_K_L",
        14 => "MOSTLY_Q4_K_S",
        15 => "MOSTLY_Q4_K_M",
        16 => "MOSTLY_Q5_K_S",
        17 => "MOSTLY_Q5_K_M",
        18 => "MOSTLY_Q6_K",
        19 => "MOSTLY_IQ2_XXS",
        20 => "MOSTLY_IQ2_XS",
        21 => "MOSTLY_Q2_K_S",
        22 => "MOSTLY_IQ3_XS",
        23 => "MOSTLY_IQ3_XXS",
        24 => "MOSTLY_IQ1_S",
        25 => "MOSTLY_IQ4_NL",
        26 => "MOSTLY_IQ3_S",
        27 => "MOSTLY_IQ3_M",
        28 => "MOSTLY_IQ2_S",
        29 => "MOSTLY_IQ2_M",
        30 => "MOSTLY_IQ4_XS",
        31 => "MOSTLY_IQ1_M",
        32 => "MOSTLY_BF16",
        36 => "MOSTLY_TQ1_0",
        37 => "MOSTLY_TQ2_0",
        38 => "MOSTLY_MXFP4_MOE",
        _ => return None,
    })
}

/// Bytes one KV-cache row of `n_elems` elements takes in a llama.cpp cache type
/// (`-ctk`/`-ctv`: f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl), or `None` when the
/// type is unknown or the row is not a whole number of blocks.
pub fn row_bytes(type_id: u32, n_elems: u64) -> Option<u64> {
    let info = ggml_type_info(type_id)?;
    if !n_elems.is_multiple_of(info.block_elems) {
        return None;
    }
    (n_elems / info.block_elems).checked_mul(info.block_bytes)
}

/// The ggml type id of a llama.cpp `--cache-type-k/-v` name (case-insensitive).
pub fn cache_type_id(name: &str) -> Option<u32> {
    Some(match name.to_ascii_lowercase().as_str() {
        "f32" => 0,
        "f16" => 1,
        "bf16" => 30,
        "q8_0" => 8,
        "q4_0" => 2,
        "q4_1" => 3,
        "q5_0" => 6,
        "q5_1" => 7,
        "iq4_nl" => 20,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_quant_blocks_match_ggml_common() {
        // block_q4_K: d, dmin (2×f16) + scales[12] + qs[128] = 144 bytes per 256 weights.
        assert_eq!(ggml_type_info(12).map(|i| i.block_bytes), Some(144));
        // block_q6_K: ql[128] + qh[64] + scales[16] + d (f16) = 210.
        assert_eq!(ggml_type_info(14).map(|i| i.block_bytes), Some(210));
        assert_eq!(ggml_type_info(4), None);
        assert_eq!(row_bytes(1, 256), Some(512));
        assert_eq!(row_bytes(8, 256), Some(8 * 34));
        assert_eq!(row_bytes(8, 250), None);
        assert_eq!(llama_ftype_name(15), Some("MOSTLY_Q4_K_M"));
        assert_eq!(cache_type_id("F16"), Some(1));
    }
}
