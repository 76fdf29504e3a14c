"""The figures of ``visualize=True`` (plotly, Debian's python3-plotly): the
charts HTA draws, from the same DataFrames the methods return.  plotly is
imported on first use only, so scripts that never visualize never pay for
it.  Figures are shown only inside IPython/Jupyter (a script gets them in
``TraceAnalysis.figures`` and shows or saves them itself)."""


def _px():
    import plotly.express as px

    return px


def show(figs):
    try:
        get_ipython  # noqa: F821 - defined inside IPython only
    except NameError:
        return
    for f in figs:
        f.show()


def temporal(df):
    px = _px()
    d = df.copy()
    for c in ("idle_time", "compute_time", "non_compute_time"):
        d[c] = d[c + "_pctg"] / 100
    fig = px.bar(d, x="rank", y=["idle_time", "compute_time", "non_compute_time"],
                 title="Temporal breakdown across ranks", labels={"rank": "Rank"})
    fig.update_layout(yaxis_tickformat=".2%", yaxis_title="Percentage", legend_title="Time Breakdown")
    return [fig]


def idle(df, pctg):
    px = _px()
    d = df.copy()
    d["stream"] = d["stream"].astype(str)
    y = "idle_time_ratio" if pctg else "idle_time"
    figs = []
    for rank, part in d.groupby("rank"):
        fig = px.bar(part, x="stream", y=y, color="idle_category", hover_data=["idle_time", "idle_time_ratio"],
                     title=f"Idle time breakdown on rank {rank} per CUDA stream")
        fig.update_layout(yaxis_title="Percentage" if pctg else "Idle time (us)", legend_title="Idle Time Breakdown")
        if pctg:
            fig.update_layout(yaxis_tickformat=".2%")
        figs.append(fig)
    return figs


def kernels(types, metrics):
    px = _px()
    figs = [px.pie(types[types["percentage"] > 0], values="percentage", names="kernel_type", height=500,
                   title="Kernel Type Percentage Across All Ranks")]
    for kt, part in metrics.groupby("kernel_type"):
        for name, k in part.groupby("name"):
            if name == "others":
                continue
            figs.append(px.bar(k, x="rank", y="mean (us)", title=f'Kernel type "{kt}" - {name}',
                               error_y=k["max (us)"] - k["mean (us)"], error_y_minus=k["mean (us)"] - k["min (us)"]))
    return figs


def overlap(df):
    px = _px()
    d = df.copy()
    d["comp_comm_overlap_ratio"] = d["comp_comm_overlap_pctg"] / 100
    fig = px.bar(d, x="rank", y="comp_comm_overlap_ratio", title="Computation-Communication Overlap",
                 labels={"rank": "Rank", "comp_comm_overlap_ratio": "Computation-Communication Overlap Percentage"})
    fig.update_layout(yaxis_tickformat=".2%")
    return [fig]


def launch(df, rank, runtime_cutoff, launch_delay_cutoff):
    px = _px()
    short = df[(df["cpu_duration"] <= runtime_cutoff) & (df["gpu_duration"] < df["cpu_duration"])]
    return [
        px.scatter(short, x="cpu_duration", y="gpu_duration",
                   title=f"Rank {rank}: GPU kernels shorter than their CPU launch"),
        px.histogram(df[df["cpu_duration"] > runtime_cutoff], x="cpu_duration",
                     title=f"Rank {rank}: CPU launch calls longer than {runtime_cutoff} us"),
        px.histogram(df[df["launch_delay"] > launch_delay_cutoff], x="launch_delay",
                     title=f"Rank {rank}: launch delays longer than {launch_delay_cutoff} us"),
    ]


def annotations(df):
    px = _px()
    return [px.pie(part, values="sum (us)", names="name", title=f"Rank {rank}: time per user annotation")
            for rank, part in df.groupby("rank")]


def patterns(df, top_k):
    px = _px()
    return [px.bar(df.head(top_k), x="pattern", y="count", title="Frequent CUDA kernel sequences")]


def diff(df, col):
    px = _px()
    d = df.reset_index()
    return px.bar(d, x=d.columns[0], y=col, title=col)
