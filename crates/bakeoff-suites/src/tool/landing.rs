//! Where a tool call landed: in `tool_calls` (the server parsed it), as text in `content`
//! (the model called, but the server has no tool parser for it: vLLM without
//! `--enable-auto-tool-choice --tool-call-parser …` returns the model's text as it came,
//! docs.vllm.ai features/tool_calling; llama.cpp without `--jinja` or with a template that lacks
//! tool support), inside the reasoning, or nowhere (the model did not call).

use serde_json::Value;

use super::checker::ActualCall;

/// Where a call landed: bakeoff-artifact's shape, recorded in each item's `extra.landing`.
pub use bakeoff_artifact::ToolLanding as Landing;

/// Calls written as text: every JSON object (alone, in an array, or inside `<tool_call>` tags,
/// as Hermes and Qwen templates write them) that has a `name` and `arguments` or
/// `parameters` (Llama 3 JSON style). Arguments are re-serialized to text so the checker sees
/// them the way it sees a parsed call.
pub fn calls_in_text(text: &str) -> Vec<ActualCall> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let mut de = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = de.next() {
                let used = de.byte_offset();
                if let Some(c) = as_call(&v) {
                    out.push(c);
                    i += used.max(1);
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

fn as_call(v: &Value) -> Option<ActualCall> {
    let obj = v.as_object()?;
    // OpenAI shape written out: {"type":"function","function":{"name":…,"arguments":…}}
    if let Some(f) = obj.get("function").and_then(Value::as_object) {
        return as_call(&Value::Object(f.clone()));
    }
    let name = obj.get("name")?.as_str()?.to_string();
    let args = obj.get("arguments").or_else(|| obj.get("parameters"))?;
    let arguments = match args {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(ActualCall { name, arguments })
}

/// Decide the landing place and the calls found there.
pub fn locate(
    tool_calls: &[bakeoff_wire::ToolCall],
    content: &str,
    reasoning: &str,
) -> (Landing, Vec<ActualCall>) {
    if !tool_calls.is_empty() {
        let calls = tool_calls
            .iter()
            .map(|c| ActualCall {
                name: c.function.name.clone(),
                arguments: c.function.arguments.clone(),
            })
            .collect();
        return (Landing::ToolCalls, calls);
    }
    let in_content = calls_in_text(content);
    if !in_content.is_empty() {
        return (Landing::ContentText, in_content);
    }
    let in_reasoning = calls_in_text(reasoning);
    if !in_reasoning.is_empty() {
        return (Landing::Reasoning, in_reasoning);
    }
    (Landing::Nowhere, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_tags_llama3_json_and_openai_shapes() {
        // vLLM without a tool parser: the Hermes block left in content.
        let c = calls_in_text(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name, "get_weather");
        assert_eq!(c[0].arguments, r#"{"city":"Paris"}"#);
        let c = calls_in_text(
            r#"Sure! {"name": "f", "parameters": {"x": 1}} and [{"name":"g","arguments":"{\"y\":2}"}]"#,
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].arguments, r#"{"y":2}"#);
        let c = calls_in_text(r#"{"type":"function","function":{"name":"h","arguments":{}}}"#);
        assert_eq!(c[0].name, "h");
        assert!(calls_in_text("<|im_end|> no call {not json} {\"a\": 1}").is_empty());
    }

    #[test]
    fn landing_order() {
        let (l, _) = locate(&[], "", "");
        assert_eq!(l, Landing::Nowhere);
        let (l, c) = locate(&[], "", r#"I will call {"name":"f","arguments":{}}"#);
        assert_eq!((l, c.len()), (Landing::Reasoning, 1));
        let (l, _) = locate(&[], r#"{"name":"f","arguments":{}}"#, "");
        assert_eq!(l, Landing::ContentText);
    }
}
