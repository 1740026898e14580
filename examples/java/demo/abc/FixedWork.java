package demo.abc;

import demo.util.Harness;

/**
 * The DTrace example's call flow doing fixed work (arithmetic, no clock reads inside, so tracing
 * cannot shorten or lengthen the work): a() calls b() twice and c() once, b() calls c()
 * twice. Work per call in units: a 135 inclusive / 45 exclusive, b 40/20, c 10/10.
 *
 * The JVM first scales the unit so that one c() takes C_US microseconds, then measures
 * its own untraced time per call of a(), b() and c() (median of interleaved batches), prints READY
 * and waits for the tracer. Then it runs ITERATIONS calls of a() and prints
 * DONE a_ns=.. b_ns=.. c_ns=.. (untraced, per call) traced_a_ns=.. (per call, traced)
 * slowest_batch_pct=.. (the slowest of 20 batches of the traced run against the median one)
 * ref_ns=.. traced_ref_ns=.. (Harness.referenceNs, medians, beside the untraced rounds and
 * between the traced batches: traced_ref_ns / ref_ns is how much slower the host itself ran
 * during the trace, which the JVM's untraced per-call times do not know).
 * With SORTS_PER_TEN_A, the traced run also sorts a 48-element Integer[] (about 1,400 calls of the
 * JDK's, each with almost no code between its probe events) that many times per ten a(), untimed:
 * events cheaper than a()'s then make most of the trace's events.
 * With LINGER ("linger"), after DONE it waits for a line, then calls a() until the next line or
 * the end of stdin: work for a tracer to measure after its report (jmethodtime's windows after a
 * trace), none of it before the line; then prints LINGERED windows_ref_ns=.. (the median of
 * Harness.referenceNs timed every 50 ms meanwhile: how fast the host ran in the windows). With
 * LEAD, DONE ends with windows_ref_ns=.., that of the calls before the trace.
 * With LEAD ("lead"), after READY it calls a() until a line, then runs the ITERATIONS: work for a
 * tracer to measure before its trace (jmethodtime --cost-before).
 * usage: FixedWork ITERATIONS C_US [SORTS_PER_TEN_A [LINGER|LEAD]]
 * With -Ddemo.unit=N, the unit is N, not scaled to C_US: the same work as another JVM's (its DONE unit=).
 */
public final class FixedWork {
    static int unit = 100;  // loop iterations per unit of work
    static long sink;

    static void a() {
        long x = sink;
        for (int i = 0; i < 15 * unit; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 20 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        b();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void b() {
        long x = sink;
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 5 * unit; i++) { x = x * 31 + i; }
        c();
        for (int i = 0; i < 10 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    static void c() {
        long x = sink;
        for (int i = 0; i < 10 * unit; i++) { x = x * 31 + i; }
        sink = x;
    }

    // ns per call over n calls of one method (0: a, 1: b, 2: c).
    static double perCall(int which, int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (which == 0) a(); else if (which == 1) b(); else c();
        }
        return (System.nanoTime() - t0) / (double) n;
    }

    static double median(double[] v) {
        double[] sorted = v.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    // ns per call of a(), b() and c(): the median of ROUNDS rounds, each timing one
    // batch of each (about 20 ms apiece), so that a slow spell of the host lands on
    // all three alike instead of on one method's batches.
    static double[] untracedPerCall(int rounds) {
        double[][] v = new double[4][rounds];
        for (int r = 0; r < rounds; r++) {
            v[0][r] = perCall(0, 300);
            v[1][r] = perCall(1, 1000);
            v[2][r] = perCall(2, 4000);
            v[3][r] = Harness.referenceNs();
        }
        return new double[] {median(v[0]), median(v[1]), median(v[2]), median(v[3])};
    }

    // Warms a(), b() and c() up (JIT) and scales the unit so that one c() takes cTargetNs,
    // or takes the unit from -Ddemo.unit=N (another JVM's, e.g. an untraced one's DONE unit=).
    static void warmAndScale(double cTargetNs) {
        Integer fixedUnit = Integer.getInteger("demo.unit");
        if (fixedUnit != null) {
            unit = fixedUnit;
        }
        for (int round = 0; round < 3; round++) {
            perCall(0, 3000);
            Harness.referenceNs();
            double[] c = new double[5];
            for (int i = 0; i < c.length; i++) {
                c[i] = perCall(2, 2000);
            }
            if (fixedUnit == null) {
                unit = Math.max(1, (int) Math.round(unit * cTargetNs / median(c)));
            }
        }
        perCall(0, 3000);
    }

    static int sortsPerTenA = 0;
    static final Integer[] unsorted = new Integer[48];
    static final Integer[] sorting = new Integer[48];

    static void sortBeside(int n) {
        for (int i = 0; i < n; i++) {
            System.arraycopy(unsorted, 0, sorting, 0, unsorted.length);
            java.util.Arrays.sort(sorting);
        }
    }

    static final int BATCHES = 20;
    static final double[] batchNs = new double[BATCHES];  // ns per a() in each batch of run()
    static long tracedANs;  // the batches' a() calls alone, ns (neither the reference loops nor the sorts)
    static final double[] referenceNs = new double[BATCHES];  // Harness.referenceNs() before each batch

    // ITERATIONS calls of a(), timed in BATCHES batches: a batch far slower than the
    // median one is a spell in which the host took the CPU away (DONE's slowest_batch_pct).
    static void run(int iterations) {
        for (int b = 0; b < BATCHES; b++) {
            int count = iterations / BATCHES + (b < iterations % BATCHES ? 1 : 0);
            referenceNs[b] = Harness.referenceNs();
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                a();
            }
            long ns = System.nanoTime() - t0;
            tracedANs += ns;
            batchNs[b] = ns / (double) Math.max(1, count);
            if (sortsPerTenA > 0) {
                sortBeside(count * sortsPerTenA / 10);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        double cTargetNs = Double.parseDouble(args[1]) * 1000;
        sortsPerTenA = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        java.util.Random random = new java.util.Random(1);
        for (int i = 0; i < unsorted.length; i++) {
            unsorted[i] = random.nextInt();
        }
        if (sortsPerTenA > 0) {
            sortBeside(3000);  // compiled before the trace
        }
        warmAndScale(cTargetNs);
        double[] untraced = untracedPerCall(15);
        double aNs = untraced[0], bNs = untraced[1], cNs = untraced[2], refNs = untraced[3];
        if (args.length > 3 && args[3].equals("lead")) {
            Harness.ready();
            callAUntilLine();
        } else {
            Harness.awaitGo();
        }
        run(iterations);
        double tracedA = tracedANs / (double) iterations;
        // Inline, not median(): no method of demo/abc may run in the trace besides run()'s tree.
        double[] sorted = batchNs.clone();
        java.util.Arrays.sort(sorted);
        double medianBatch = sorted[BATCHES / 2], slowestBatch = sorted[BATCHES - 1];
        long slowestPct = medianBatch > 0 ? Math.round(100 * slowestBatch / medianBatch) : 100;
        double[] refs = referenceNs.clone();
        java.util.Arrays.sort(refs);
        double tracedRefNs = refs[BATCHES / 2];
        // A StringBuilder, not "+": linking a string concatenation's invokedynamic call site
        // makes about 200,000 JDK calls, which would all trap inside the trace.
        StringBuilder done = new StringBuilder().append("a_ns=").append(Math.round(aNs))
                .append(" b_ns=").append(Math.round(bNs)).append(" c_ns=").append(Math.round(cNs))
                .append(" traced_a_ns=").append(Math.round(tracedA)).append(" slowest_batch_pct=").append(slowestPct)
                .append(" ref_ns=").append(Math.round(refNs)).append(" traced_ref_ns=").append(Math.round(tracedRefNs))
                .append(" unit=").append(unit);
        if (windowReferences > 0) {
            done.append(" windows_ref_ns=").append(windowsRefNs);  // LEAD: the windows came before
        }
        Harness.done(done.append(" sink=").append(sink & 1).toString());
        if (args.length > 3 && args[3].equals("linger")) {
            linger();
            System.out.println(new StringBuilder("LINGERED windows_ref_ns=").append(windowsRefNs).toString());
            System.out.flush();
        }
    }

    static volatile boolean lingering;

    static void linger() throws Exception {
        if (Harness.nextLine() == null) {
            return;
        }
        callAUntilLine();
    }

    // Calls a() until the next line on stdin, or its end.
    static void callAUntilLine() {
        lingering = true;
        // An anonymous class, not a lambda: linking a lambda makes thousands of JDK calls.
        Thread until = new Thread() {
            @Override
            public void run() {
                try {
                    Harness.nextLine();
                } catch (java.io.IOException e) {
                    // the end of stdin ends it alike
                }
                lingering = false;
            }
        };
        until.setDaemon(true);
        until.start();
        long nextReference = System.nanoTime();
        while (lingering) {
            a();
            long now = System.nanoTime();
            if (now >= nextReference && windowReferences < windowReferenceNs.length) {
                windowReferenceNs[windowReferences++] = Harness.referenceNs();
                nextReference = now + 50_000_000L;
            }
        }
        if (windowReferences > 0) {
            double[] v = java.util.Arrays.copyOf(windowReferenceNs, windowReferences);
            java.util.Arrays.sort(v);
            windowsRefNs = Math.round(v[v.length / 2]);
        }
    }

    // Harness.referenceNs() every 50 ms while a() is called for a tracer's windows (LINGER, LEAD).
    static final double[] windowReferenceNs = new double[1024];
    static int windowReferences;
    // Their median, 0 when none: windows_ref_ns / traced_ref_ns is how much slower the host itself
    // ran in the windows than in the trace. A field, not a method: no method of demo/abc may run in
    // the trace besides run()'s tree.
    static long windowsRefNs;
}
