//! The accept loop every route out shares.

use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The connections one route holds open at once; another is closed as soon as it is accepted,
/// so that an agent opening connections without end costs the server a bounded amount.
pub(crate) const MAX_OPEN: usize = 1024;

/// Runs `handle` for each connection on `listener`, at most [`MAX_OPEN`] at once, until
/// dropped: the connections end with it.
pub(crate) async fn serve_each<F, Fut>(listener: TcpListener, mut handle: F)
where
    F: FnMut(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if connections.len() < MAX_OPEN => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(handle(stream));
                }
                // Over the bound: dropped, which closes it.
                Ok(_) => {}
                // Out of descriptors, or a connection reset before it was accepted: the
                // listener itself stays good.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
