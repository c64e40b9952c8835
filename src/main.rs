fn main() {
    let cli = forge::cli::parse();
    quiet_on_closed_pipe(&cli.command);
    if let Err(e) = forge::cli::run(cli) {
        // One line: the error and each cause once (see `util::error_line`).
        eprintln!("error: {}", forge::util::error_line(e.as_ref()));
        std::process::exit(1);
    }
}

/// `forge rank … | head`: a command that only prints (rank, select, verify-bits, calibrate
/// --fit) ends quietly when its reader closes
/// the pipe, as Unix tools do (Rust ignores SIGPIPE, so `println!` would panic). Only for
/// those: the measuring commands write to their workers' pipes and must see a closed one as
/// an error they handle (keeping what was measured), not be killed by a signal.
fn quiet_on_closed_pipe(command: &forge::cli::Cmd) {
    use forge::cli::Cmd;
    let prints_only = match command {
        Cmd::Rank { .. } | Cmd::Select { .. } | Cmd::VerifyBits { .. } => true,
        Cmd::Calibrate(args) => args.fits(),
        _ => false,
    };
    if prints_only {
        #[cfg(unix)]
        // SAFETY: restores the default disposition of one signal before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}
