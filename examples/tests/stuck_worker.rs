//! `stuck_worker` in quick mode, end to end: every runtime produces its
//! rows and brigade compensates. Only what the runs did is checked, never
//! how fast: these machines are too noisy for timing assertions.

use brigade_examples::stuck_worker::{self, Config, Contender};

#[test]
fn quick_run_measures_every_runtime_and_brigade_compensates() {
    let config = Config::parse(["--quick".to_owned()]).unwrap();
    let rows = stuck_worker::run(&config).unwrap();
    let contenders: Vec<Contender> = rows.iter().map(|row| row.contender).collect();
    assert_eq!(contenders, Contender::ALL);
    for row in &rows {
        let name = row.contender.name();
        assert_eq!(row.spawn.len(), config.rounds, "{name}");
        assert_eq!(row.echo.len(), config.rounds, "{name}");
        for spawn in &row.spawn {
            assert!(spawn.spawned > 0 && spawn.measured > 0, "{name}: {spawn:?}");
            assert!(spawn.measured <= spawn.spawned, "{name}: {spawn:?}");
        }
        for echo in &row.echo {
            assert!(echo.served > 0, "{name}: {echo:?}");
            assert!(echo.blocking_calls > 0, "{name}: {echo:?}");
        }
        // Only brigade counts compensations.
        let counted = row.spawn.iter().all(|spawn| spawn.compensations.is_some())
            && row.echo.iter().all(|echo| echo.compensations.is_some());
        assert_eq!(counted, row.contender != Contender::Tokio, "{name}");
    }
    // Both parts block every worker while work waits, part 1 for 150 ms:
    // brigade with its default settings must start a spare.
    let brigade = &rows[Contender::Brigade as usize];
    let compensations: u64 = (brigade.spawn.iter().map(|spawn| spawn.compensations))
        .chain(brigade.echo.iter().map(|echo| echo.compensations))
        .flatten()
        .sum();
    assert!(compensations >= 1, "{brigade:?}");
    // With compensation_threshold(None) only block_in_place hands off, and
    // nothing here calls it.
    let uncompensated = &rows[Contender::BrigadeUncompensated as usize];
    assert!(
        uncompensated
            .spawn
            .iter()
            .all(|spawn| spawn.compensations == Some(0)),
        "{:?}",
        uncompensated.spawn
    );
    let tables = stuck_worker::format_tables(&config, &rows);
    for contender in Contender::ALL {
        assert_eq!(tables.matches(contender.name()).count(), 2, "{tables}");
    }
}
