# Second, independent reader for threadlab's histogram logs (the test in
# histogram_test.go runs it): the Python hdrh package decodes every
# interval of one tag, adds them up, and prints the total count and p99
# (and p50, p99.9) in the log's units, one per line.
import sys

from hdrh.histogram import HdrHistogram

path, tag = sys.argv[1], sys.argv[2]
total = None
with open(path) as f:
    for line in f:
        line = line.strip()
        if not line.startswith("Tag=" + tag + ","):
            continue
        payload = line.split(",")[4]
        h = HdrHistogram.decode(payload)
        if total is None:
            total = HdrHistogram(h.lowest_trackable_value, h.highest_trackable_value, h.significant_figures)
        total.add(h)
if total is None:
    sys.exit("no interval tagged " + tag)
print(total.get_total_count())
for q in (50, 99, 99.9):
    print(total.get_value_at_percentile(q))
