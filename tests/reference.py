"""Short, obviously correct Python references for the C simulators."""


def assoc_reference(keys_sets, sets, ways, policy):
    """Hits (list of bool) of a set-associative store on (set, tag) keys under LRU or FIFO."""
    contents = [[] for _ in range(sets)]  # per set, oldest first (by use for LRU, by fill for FIFO)
    hits = []
    for s, tag in keys_sets:
        line = contents[s]
        if tag in line:
            hits.append(True)
            if policy == "lru":
                line.remove(tag)
                line.append(tag)
            continue
        hits.append(False)
        if len(line) == ways:
            line.pop(0)
        line.append(tag)
    return hits


def cache_reference(addrs, size_bytes, line_bytes, ways, policy):
    sets = size_bytes // (line_bytes * ways)
    keys = [((a // line_bytes) % sets, (a // line_bytes) // sets) for a in addrs]
    return assoc_reference(keys, sets, ways, policy)


def tlb_reference(addrs, page_bytes, entries, policy="lru"):
    """Fully associative TLB: a translation is (page number, page size)."""
    keys = [(0, (a // p, p)) for a, p in zip(addrs, page_bytes)]
    return assoc_reference(keys, 1, entries, policy)
