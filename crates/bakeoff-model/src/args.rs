//! What an engine's command line says about its model (`-m`, `--quantization`, `-c`, …): read
//! by the checkpoint audit before a seat starts and by the memory plan, with ONE rule for both.

/// The value after `flag` (or in `flag=value`) for the first of `names` present in `args`.
pub fn flag_value<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        for n in names {
            if a == n {
                return it.next().map(String::as_str);
            }
            if let Some(v) = a.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
        }
    }
    None
}

/// The value of the first of `names`, in the order given, present in `args`: `--model` before
/// llama.cpp's `-m`, so `python -m vllm.entrypoints.openai.api_server --model DIR` names `DIR`,
/// not the module.
pub fn flag_value_by_priority<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| flag_value(args, &[n]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_and_absent() {
        let args: Vec<String> = ["--model", "/m", "--quantization=fp8", "-c", "4096"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(flag_value(&args, &["-m", "--model"]), Some("/m"));
        assert_eq!(flag_value(&args, &["--quantization", "-q"]), Some("fp8"));
        assert_eq!(flag_value(&args, &["--tp"]), None);
        assert_eq!(flag_value(&args[..1], &["--model"]), None);
    }

    #[test]
    fn priority_skips_a_python_module_flag() {
        let args: Vec<String> = ["-m", "vllm.entrypoints.openai.api_server", "--model", "/d"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            flag_value(&args, &["--model", "-m"]),
            Some("vllm.entrypoints.openai.api_server")
        );
        assert_eq!(
            flag_value_by_priority(&args, &["--model", "--model-path", "-m"]),
            Some("/d")
        );
    }
}
