use super::*;
use crate::plan::LoadPlan;
use bakeoff_wire::FunctionCall;

fn cfg(turns: u32) -> Sessions {
    Sessions {
        turns,
        system_prompt_tokens: 4,
        tool_result_tokens: LengthSpec::Fixed(12),
        tool_wait: WaitSpec::Fixed(0.0),
        fork: None,
        tools: true,
    }
}

fn roles(r: &ChatRequest) -> Vec<String> {
    r.messages.iter().map(|m| m.role.clone()).collect()
}

#[test]
fn the_history_grows_by_reply_tool_calls_and_results() {
    let plan = LoadPlan::new("m");
    let c = cfg(3);
    let mut s = c.start(9, 1, 0);
    let (r1, _, t1) = s.next_request(&plan.request_plan(), &c).unwrap();
    assert_eq!((t1, roles(&r1)), (1, vec!["system".into(), "user".into()]));
    assert!(r1.tools.is_some());
    // The model called the tool twice: each call gets a tool message answering its id.
    let call = |id: Option<&str>| ToolCall {
        id: id.map(str::to_string),
        kind: "function".into(),
        function: FunctionCall {
            name: "run_command".into(),
            arguments: "{}".into(),
        },
    };
    s.record_reply(String::new(), vec![call(Some("a")), call(None)]);
    let (r2, _, t2) = s.next_request(&plan.request_plan(), &c).unwrap();
    assert_eq!(t2, 2);
    assert_eq!(roles(&r2), ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(r2.messages[2].content, None);
    assert_eq!(r2.messages[3].tool_call_id.as_deref(), Some("a"));
    assert_eq!(r2.messages[4].tool_call_id.as_deref(), Some("call_1_1"));
    assert_eq!(r2.messages[..2], r1.messages[..]);
    // No call: the result comes as a user turn.
    s.record_reply("text".into(), Vec::new());
    let (r3, _, _) = s.next_request(&plan.request_plan(), &c).unwrap();
    assert_eq!(roles(&r3)[5..], ["assistant", "user"]);
    assert_eq!(r3.messages[..5], r2.messages[..]);
    assert!(s.next_request(&plan.request_plan(), &c).is_none());
}

#[test]
fn sub_sessions_share_the_parent_history_then_part() {
    let plan = LoadPlan::new("m");
    let mut c = cfg(4);
    c.fork = Some(Fork {
        sessions: 2,
        turns: 2,
    });
    assert_eq!(c.fork_after(), 2);
    assert_eq!(c.requests_per_session(), 8);
    let mut s = c.start(9, 1, 3);
    s.resume_until(c.fork_after());
    for _ in 0..2 {
        s.next_request(&plan.request_plan(), &c).unwrap();
        s.record_reply("r".into(), Vec::new());
    }
    assert!(s.next_request(&plan.request_plan(), &c).is_none());
    let (mut a, mut b) = (s.fork(1, 2), s.fork(2, 2));
    let (ra, _, ta) = a.next_request(&plan.request_plan(), &c).unwrap();
    let (rb, _, tb) = b.next_request(&plan.request_plan(), &c).unwrap();
    assert_eq!((ta, tb), (3, 3));
    let n = ra.messages.len();
    assert_eq!(ra.messages[..n - 1], rb.messages[..n - 1]);
    assert_ne!(ra.messages[n - 1], rb.messages[n - 1]);
    a.record_reply("x".into(), Vec::new());
    assert_eq!(a.next_request(&plan.request_plan(), &c).unwrap().2, 4);
    assert!(a.next_request(&plan.request_plan(), &c).is_none());
    // The parent resumes after its sub-sessions with turn 3.
    s.resume_until(c.turns);
    assert_eq!(s.next_request(&plan.request_plan(), &c).unwrap().2, 3);
}

#[test]
fn sessions_differ_from_their_first_word_unless_sharing_is_allowed() {
    let mut plan = LoadPlan::new("m");
    let c = cfg(1);
    let first = |plan: &LoadPlan, id| {
        let (r, _, _) = c
            .start(9, 1, id)
            .next_request(&plan.request_plan(), &c)
            .unwrap();
        r.messages[1].content.clone().unwrap()
    };
    assert_ne!(first(&plan, 0), first(&plan, 1));
    plan.allow_prefix_cache = true;
    assert_eq!(first(&plan, 0), first(&plan, 1));
}
