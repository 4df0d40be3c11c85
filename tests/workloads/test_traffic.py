"""Network workloads: Zipf popularity and Pareto sizes, MSS segments, voice and video streams, boot storms."""
import numpy as np
import pytest

from pysim.workloads.traffic import boot_storm, cbr_audio, segments, video_frames, web_objects, web_requests


def test_web_objects_have_zipf_shares_and_capped_pareto_sizes():
    objs = web_objects(10_000, alpha=1.0, pareto_shape=1.2, min_bytes=1000, max_bytes=1_000_000, rng=1)
    assert objs.share.sum() == pytest.approx(1.0)
    assert objs.share[0] / objs.share[9] == pytest.approx(10.0, rel=1e-6)  # Zipf 1: share ~ 1/rank
    assert objs.bytes.min() >= 1000 and objs.bytes.max() <= 1_000_000
    # a Pareto tail: P(size > 10 x min) = 10 ** -shape
    assert (objs.bytes > 10_000).mean() == pytest.approx(10 ** -1.2, abs=0.01)
    req = web_requests(objs, 200_000, rng=2)
    assert (req == 0).mean() == pytest.approx(objs.share[0], rel=0.05)


def test_an_object_is_cut_into_full_segments_and_a_remainder():
    assert list(segments(4000, 1460)) == [1460, 1460, 1080]
    assert segments(0).size == 0 and segments(2920).tolist() == [1460, 1460]


def test_g711_voice_is_160_byte_payloads_fifty_times_a_second():
    v = cbr_audio()
    assert (v["payload_bytes"], v["packets_per_s"], v["wire_bps"]) == (160, 50.0, 80_000)


def test_video_has_an_i_frame_per_group_and_keeps_the_mean_sizes():
    f = video_frames(12_000, gop=12, jitter=0.2, rng=3)
    assert (f.kind == "I").sum() == 1000 and f.time_s.iloc[30] == pytest.approx(1.0)
    assert f[f.kind == "I"].bytes.mean() == pytest.approx(40_000, rel=0.03)
    assert f[f.kind == "P"].bytes.mean() == pytest.approx(8_000, rel=0.03)


def test_a_boot_storm_starts_every_client_in_the_window_and_fetches_files_in_turn():
    s = boot_storm(100, 10.0, [1000, 50_000, 2000], think_s=0.5, rng=4)
    assert len(s) == 300 and s.time_s.min() >= 0 and s[s.file == 0].time_s.max() <= 10.0
    first = s[s.client == 0]
    assert np.diff(first.time_s).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError):
        boot_storm(-1, 1.0, [1])


def test_the_diurnal_load_peaks_at_its_hour_and_bottoms_out_twelve_hours_later():
    from pysim.workloads.traffic import diurnal_load

    hours = np.linspace(0, 24, 97)
    load = np.array([diurnal_load(h, peak_hour=14, trough_fraction=0.2) for h in hours])
    assert hours[load.argmax()] == 14 and hours[load.argmin()] == 2
    assert load.max() == pytest.approx(1.0) and load.min() == pytest.approx(0.2)


def test_the_class_mix_moves_users_home_after_work_and_sums_to_one():
    from pysim.workloads.traffic import class_mix

    kw = {"home_day": 0.3, "home_night": 0.9, "dialup_of_home": 0.5}
    noon, night, evening = class_mix(12, **kw), class_mix(3, **kw), class_mix(18, **kw)
    assert noon == pytest.approx([0.7, 0.15, 0.15]) and night == pytest.approx([0.1, 0.45, 0.45])
    assert noon[0] > evening[0] > night[0]  # the ramp: half way home at 18 h
    assert all(m.sum() == pytest.approx(1.0) for m in (noon, night, evening))
    with pytest.raises(ValueError, match="dialup_of_home"):
        class_mix(12, home_day=0.3, home_night=0.9, dialup_of_home=1.5)
