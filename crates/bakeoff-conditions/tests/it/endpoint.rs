//! Whom a measurement of an endpoint leaves out: the process listening on a local endpoint's
//! port is its engine; a remote endpoint's engine is not on this host.

use bakeoff_conditions::Exclude;

#[test]
fn the_listener_on_a_local_port_is_the_engine() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let ex = Exclude::for_endpoint("127.0.0.1", Some(port));
    // This test process holds the port.
    assert_eq!(ex.engine_pid, Some(std::process::id()), "{}", ex.engine);
    assert_eq!(ex.bakeoff_pid, std::process::id());
    let ex = Exclude::for_endpoint("localhost", Some(port));
    assert_eq!(ex.engine_pid, Some(std::process::id()), "{}", ex.engine);
}

#[test]
fn a_remote_endpoint_or_a_free_port_has_no_engine_here() {
    let ex = Exclude::for_endpoint("10.1.2.3", Some(8000));
    assert_eq!(ex.engine_pid, None);
    assert!(
        ex.engine.contains("remote endpoint 10.1.2.3:8000"),
        "{}",
        ex.engine
    );
    let free = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ex = Exclude::for_endpoint("127.0.0.1", Some(free));
    assert_eq!(ex.engine_pid, None, "{}", ex.engine);
    let ex = Exclude::for_endpoints(&[("127.0.0.1", Some(free)), ("10.1.2.3", Some(8000))]);
    assert!(ex.also.is_empty());
    assert!(
        ex.engine.contains("; remote endpoint 10.1.2.3:8000"),
        "{}",
        ex.engine
    );
}
