//! The streamed request's connection: plain TCP, or TLS over it (`https://`).
//!
//! The read loop waits on the socket's readiness and reads what has arrived without awaiting
//! (`try_read`), so no per-stream read buffer exists (crate::h1). TLS keeps that shape: the
//! handshake and the request go through tokio-rustls (0.26), then the session is taken apart
//! (`TlsStream::into_inner`) and each read feeds the socket's bytes to rustls' own record
//! buffer (`ClientConnection::read_tls` over `try_read`) and decrypts them into the thread's
//! scratch buffer. What a TLS stream holds beyond a plain one is rustls' session and its
//! buffers (docs/performance.md "TLS").

use std::io::{self, Read};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A connection the request has been written on.
pub(super) enum Transport {
    Plain(TcpStream),
    Tls {
        tcp: TcpStream,
        conn: Box<rustls::ClientConnection>,
    },
}

/// `try_read` as a blocking-style reader for rustls: `WouldBlock` when nothing has arrived.
struct TryRead<'a>(&'a TcpStream);

impl Read for TryRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Transport {
    /// Write `wire` on a plain connection.
    pub(super) async fn plain(mut tcp: TcpStream, wire: &[u8]) -> io::Result<Self> {
        tcp.write_all(wire).await?;
        Ok(Transport::Plain(tcp))
    }

    /// Write `wire` over an established TLS session, then keep the socket and the session.
    pub(super) async fn tls(
        mut s: tokio_rustls::client::TlsStream<TcpStream>,
        wire: &[u8],
    ) -> io::Result<Self> {
        s.write_all(wire).await?;
        s.flush().await?;
        let (tcp, conn) = s.into_inner();
        Ok(Transport::Tls {
            tcp,
            conn: Box::new(conn),
        })
    }

    pub(super) fn socket(&self) -> &TcpStream {
        match self {
            Transport::Plain(t) | Transport::Tls { tcp: t, .. } => t,
        }
    }

    /// Decrypted bytes wait in the session already: read them before waiting on the socket.
    #[inline]
    pub(super) fn buffered(&mut self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls { conn, .. } => conn
                .process_new_packets()
                .is_ok_and(|s| s.plaintext_bytes_to_read() > 0 || s.peer_has_closed()),
        }
    }

    /// What has arrived, into `buf`: `Ok(0)` at the end of the stream, `WouldBlock` when
    /// nothing (or only part of a TLS record) has.
    #[inline]
    pub(super) fn try_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(t) => t.try_read(buf),
            Transport::Tls { tcp, conn } => loop {
                match conn.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    // The connection closed without close_notify: an end like a plain EOF; the
                    // body's framing says whether the reply was whole.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                let n = conn.read_tls(&mut TryRead(tcp))?;
                let state = conn
                    .process_new_packets()
                    .map_err(|e| io::Error::other(crate::tls::refusal(&e.to_string())))?;
                if n == 0 && state.plaintext_bytes_to_read() == 0 && !state.peer_has_closed() {
                    return Ok(0);
                }
            },
        }
    }
}
