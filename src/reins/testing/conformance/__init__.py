"""The Store conformance suite: what every engine of :class:`~reins.store.protocol.Store` must do.

Plain pytest tests that take one fixture, ``store_harness`` (a
:class:`~reins.testing.harness.StoreHarness` for the engine under test). An engine's test
module imports them all and defines that fixture::

    import pytest
    from reins.testing.conformance import *  # noqa: F403
    from reins.testing.harness import SQLiteHarness, StoreHarness

    @pytest.fixture
    def store_harness(tmp_path) -> StoreHarness:
        return SQLiteHarness(tmp_path)

Everything goes through the protocol; the harness is the only door to an engine's insides
(hand-written SQL, fingerprints, ledgers in odd states). Every test leaves ``check()`` empty.
Importing this module imports pytest and hypothesis (both dev dependencies).
"""

import pytest

# Under pytest, a failed assert in the suite shows its values, as in a test module of one's own.
_MODULES = (
    "_kit",
    "batchjobs",
    "browsing",
    "exporting",
    "human",
    "judging",
    "leases",
    "machine",
    "opening",
    "pages",
    "ratchet",
    "roundtrip",
    "withdrawing",
)
pytest.register_assert_rewrite(*(f"{__name__}.{name}" for name in _MODULES))

from reins.testing.conformance.batchjobs import (  # noqa: E402
    test_a_job_is_driven_by_one_holder_at_a_time,
    test_a_job_leases_free_items_in_one_go,
    test_a_job_moves_only_forward_and_gives_its_leases_back_when_it_ends,
    test_a_lease_left_on_an_ended_job_is_found_by_the_check,
    test_a_result_recorded_for_a_job_pins_the_turn_it_was_composed_on,
    test_every_earlier_schema_gains_batch_jobs_and_cache_counts,
    test_two_stores_opening_jobs_at_once_lease_each_item_once,
)
from reins.testing.conformance.browsing import (  # noqa: E402
    test_activity_reads_a_short_log_whole,
    test_activity_samples_a_long_log_evenly,
    test_pages_filter_by_round,
    test_pages_filter_by_text_in_the_key,
    test_pages_run_newest_first_when_descending,
)
from reins.testing.conformance.exporting import (  # noqa: E402
    test_a_batch_left_open_by_a_crash_is_rewritten_once,
    test_a_batch_left_open_by_another_process_is_finished_once,
    test_a_crashed_batch_for_another_file_is_finished_by_any_export,
    test_a_locking_submit_exports_automatically,
    test_a_shortened_file_is_not_padded,
    test_concurrent_exports_write_each_item_once,
    test_export_writes_terminal_items_once,
)
from reins.testing.conformance.human import (  # noqa: E402
    test_a_person_acts_only_where_the_action_fits,
    test_a_person_reopens_a_locked_item_into_a_new_round,
    test_a_person_resolves_a_review_item_and_it_is_exported_again,
    test_a_retried_action_of_a_person_is_written_once,
    test_hand_written_sql_cannot_bypass_the_human_lane,
)
from reins.testing.conformance.judging import (  # noqa: E402
    test_a_copy_keeps_rounds_actions_and_gates,
    test_a_judge_error_uses_no_try_and_locks_nothing,
    test_every_lease_hands_out_a_new_token_and_a_stale_one_is_refused,
    test_items_are_counted_by_the_gate_that_last_judged_them,
)
from reins.testing.conformance.leases import (  # noqa: E402
    test_a_heartbeat_extends_a_lease,
    test_a_lease_passes_over_the_keys_it_is_told_to_exclude,
    test_a_live_lease_refuses_another_owners_record,
    test_an_expired_lease_returns_the_item_to_the_pool,
    test_an_owner_gets_its_item_again,
    test_concurrent_leases_from_two_stores_never_collide,
    test_nexts_since_submit_counts_until_a_judged_record,
    test_release_gives_an_item_back,
    test_soonest_expiry,
    test_two_stores_never_lease_one_item_to_two_owners,
)
from reins.testing.conformance.machine import test_random_sequences_keep_every_invariant  # noqa: E402
from reins.testing.conformance.opening import (  # noqa: E402
    test_a_failed_migration_leaves_the_ledger_as_it_was,
    test_a_ledger_from_before_quests_were_recorded_adopts_the_first_once,
    test_a_ledger_not_ours_is_refused_and_left_untouched,
    test_a_ledger_of_another_quest_is_refused_and_left_untouched,
    test_a_ledger_whose_tables_are_not_its_version_s_says_what_to_do,
    test_a_missing_ledger_is_not_created_unless_asked,
    test_a_new_ledger_belongs_to_the_quest_that_made_it,
    test_an_older_ledger_is_migrated_and_adopted_at_once,
    test_an_older_ledger_is_refused_for_another_quest_before_it_is_migrated,
    test_every_earlier_schema_is_migrated_with_its_data,
    test_meta_is_kept_and_seen_by_every_store,
    test_two_stores_opening_an_old_ledger_at_once_migrate_it_once,
)
from reins.testing.conformance.pages import (  # noqa: E402
    test_add_dedupes_by_key_and_leaves_existing_items_untouched,
    test_add_streams_a_large_input,
    test_an_empty_key_is_refused,
    test_items_can_be_walked_while_the_ledger_is_written,
    test_pages_filter_by_lease_holder,
    test_pages_filter_by_state,
    test_pages_filter_by_the_last_judged_root_cause,
    test_pages_follow_the_order_items_were_added,
)
from reins.testing.conformance.ratchet import (  # noqa: E402
    test_a_refused_record_writes_nothing,
    test_a_retried_record_is_written_once,
    test_a_stale_claim_is_refused_as_turn_moved,
    test_a_terminal_item_never_changes,
    test_hand_written_sql_cannot_break_the_ratchet,
    test_one_turn_is_one_transaction,
    test_record_stamps_turn_driver_and_state_and_keeps_counts,
    test_remaining_never_grows,
    test_tries_never_go_down,
    test_unknown_keys_are_not_found,
)
from reins.testing.conformance.roundtrip import (  # noqa: E402
    test_an_attempt_round_trips_every_field,
    test_any_json_payload_round_trips,
    test_copy_into_an_empty_store_reproduces_the_log,
    test_hostile_text_from_a_rule_is_recorded,
    test_load_refuses_a_ledger_that_is_not_empty,
    test_payloads_of_every_json_type_round_trip,
)
from reins.testing.conformance.withdrawing import (  # noqa: E402
    test_a_lock_reopened_while_its_batch_is_written_is_withdrawn_after_it,
    test_a_rejudge_that_fails_withdraws_the_lock_with_its_verdict,
    test_a_reopened_lock_is_withdrawn_once_and_exported_again_when_it_locks,
    test_a_withdrawal_goes_to_the_file_that_holds_the_lock,
    test_a_withdrawal_left_open_by_a_crash_is_written_once,
    test_nothing_is_withdrawn_that_never_reached_the_file,
    test_two_stores_claiming_at_once_claim_each_withdrawal_once,
)

__all__ = [
    "test_a_batch_left_open_by_a_crash_is_rewritten_once",
    "test_a_batch_left_open_by_another_process_is_finished_once",
    "test_a_copy_keeps_rounds_actions_and_gates",
    "test_a_crashed_batch_for_another_file_is_finished_by_any_export",
    "test_a_failed_migration_leaves_the_ledger_as_it_was",
    "test_a_heartbeat_extends_a_lease",
    "test_a_job_is_driven_by_one_holder_at_a_time",
    "test_a_job_leases_free_items_in_one_go",
    "test_a_job_moves_only_forward_and_gives_its_leases_back_when_it_ends",
    "test_a_judge_error_uses_no_try_and_locks_nothing",
    "test_a_lease_left_on_an_ended_job_is_found_by_the_check",
    "test_a_lease_passes_over_the_keys_it_is_told_to_exclude",
    "test_a_ledger_from_before_quests_were_recorded_adopts_the_first_once",
    "test_a_ledger_not_ours_is_refused_and_left_untouched",
    "test_a_ledger_of_another_quest_is_refused_and_left_untouched",
    "test_a_ledger_whose_tables_are_not_its_version_s_says_what_to_do",
    "test_a_live_lease_refuses_another_owners_record",
    "test_a_lock_reopened_while_its_batch_is_written_is_withdrawn_after_it",
    "test_a_locking_submit_exports_automatically",
    "test_a_missing_ledger_is_not_created_unless_asked",
    "test_a_new_ledger_belongs_to_the_quest_that_made_it",
    "test_a_person_acts_only_where_the_action_fits",
    "test_a_person_reopens_a_locked_item_into_a_new_round",
    "test_a_person_resolves_a_review_item_and_it_is_exported_again",
    "test_a_refused_record_writes_nothing",
    "test_a_rejudge_that_fails_withdraws_the_lock_with_its_verdict",
    "test_a_reopened_lock_is_withdrawn_once_and_exported_again_when_it_locks",
    "test_a_result_recorded_for_a_job_pins_the_turn_it_was_composed_on",
    "test_a_retried_action_of_a_person_is_written_once",
    "test_a_retried_record_is_written_once",
    "test_a_shortened_file_is_not_padded",
    "test_a_stale_claim_is_refused_as_turn_moved",
    "test_a_terminal_item_never_changes",
    "test_a_withdrawal_goes_to_the_file_that_holds_the_lock",
    "test_a_withdrawal_left_open_by_a_crash_is_written_once",
    "test_activity_reads_a_short_log_whole",
    "test_activity_samples_a_long_log_evenly",
    "test_add_dedupes_by_key_and_leaves_existing_items_untouched",
    "test_add_streams_a_large_input",
    "test_an_attempt_round_trips_every_field",
    "test_an_empty_key_is_refused",
    "test_an_expired_lease_returns_the_item_to_the_pool",
    "test_an_older_ledger_is_migrated_and_adopted_at_once",
    "test_an_older_ledger_is_refused_for_another_quest_before_it_is_migrated",
    "test_an_owner_gets_its_item_again",
    "test_any_json_payload_round_trips",
    "test_concurrent_exports_write_each_item_once",
    "test_concurrent_leases_from_two_stores_never_collide",
    "test_copy_into_an_empty_store_reproduces_the_log",
    "test_every_earlier_schema_gains_batch_jobs_and_cache_counts",
    "test_every_earlier_schema_is_migrated_with_its_data",
    "test_every_lease_hands_out_a_new_token_and_a_stale_one_is_refused",
    "test_export_writes_terminal_items_once",
    "test_hand_written_sql_cannot_break_the_ratchet",
    "test_hand_written_sql_cannot_bypass_the_human_lane",
    "test_hostile_text_from_a_rule_is_recorded",
    "test_items_are_counted_by_the_gate_that_last_judged_them",
    "test_items_can_be_walked_while_the_ledger_is_written",
    "test_load_refuses_a_ledger_that_is_not_empty",
    "test_meta_is_kept_and_seen_by_every_store",
    "test_nexts_since_submit_counts_until_a_judged_record",
    "test_nothing_is_withdrawn_that_never_reached_the_file",
    "test_one_turn_is_one_transaction",
    "test_pages_filter_by_lease_holder",
    "test_pages_filter_by_round",
    "test_pages_filter_by_state",
    "test_pages_filter_by_text_in_the_key",
    "test_pages_filter_by_the_last_judged_root_cause",
    "test_pages_follow_the_order_items_were_added",
    "test_pages_run_newest_first_when_descending",
    "test_payloads_of_every_json_type_round_trip",
    "test_random_sequences_keep_every_invariant",
    "test_record_stamps_turn_driver_and_state_and_keeps_counts",
    "test_release_gives_an_item_back",
    "test_remaining_never_grows",
    "test_soonest_expiry",
    "test_tries_never_go_down",
    "test_two_stores_claiming_at_once_claim_each_withdrawal_once",
    "test_two_stores_never_lease_one_item_to_two_owners",
    "test_two_stores_opening_an_old_ledger_at_once_migrate_it_once",
    "test_two_stores_opening_jobs_at_once_lease_each_item_once",
    "test_unknown_keys_are_not_found",
]
