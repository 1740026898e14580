package demo.cpu;

import demo.util.Harness;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Threads that outnumber the CPUs: usage RunQueue THREADS ROUNDS WORK_MS NAP_MS. Each of
 * THREADS threads ("worker-N") runs worker(): ROUNDS times work() (busy for WORK_MS of elapsed
 * time, so with more threads than CPUs it waits in the run queue for much of it) then nap()
 * (Thread.sleep NAP_MS: blocked). When every worker has returned from worker(), and before any
 * ends, the JVM reads the kernel's own accounting of its threads' run-queue wait
 * (/proc/self/task/TID/schedstat, run_delay) and prints
 * DONE threads=.. rounds=.. workers_runq_ns=.. (the workers' wait since GO) jvm_runq_ns=..
 * (every thread's).
 */
public final class RunQueue {
    static long workMs, napMs;
    static volatile long sink;

    static void work() {
        long end = System.nanoTime() + workMs * 1_000_000L;
        long x = 0;
        while (System.nanoTime() < end) {
            x = x * 31 + 7;
        }
        sink = x;
    }

    static void nap() throws InterruptedException {
        Thread.sleep(napMs);
    }

    static void worker(int rounds) throws InterruptedException {
        for (int r = 0; r < rounds; r++) {
            work();
            nap();
        }
    }

    /** tid -> run_delay (ns) of every thread of this JVM, and tid -> its name. */
    static Map<Long, Long> runDelays(Map<Long, String> names) throws IOException {
        Map<Long, Long> delays = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    String[] f = new String(Files.readAllBytes(task.resolve("schedstat"))).trim().split(" ");
                    long tid = Long.parseLong(task.getFileName().toString());
                    delays.put(tid, Long.parseLong(f[1]));
                    names.put(tid, new String(Files.readAllBytes(task.resolve("comm"))).trim());
                } catch (IOException gone) {
                    // a thread that ended meanwhile
                }
            }
        }
        return delays;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        workMs = Long.parseLong(args[2]);
        napMs = Long.parseLong(args[3]);
        Thread[] pool = new Thread[threads];
        CountDownLatch finished = new CountDownLatch(threads), release = new CountDownLatch(1);
        Map<Long, String> names = new HashMap<>();
        Harness.awaitGo();
        Map<Long, Long> before = runDelays(names);
        for (int t = 0; t < threads; t++) {
            pool[t] = new Thread(() -> {
                try {
                    worker(rounds);
                    finished.countDown();
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker-" + t);
            pool[t].start();
        }
        finished.await();
        Map<Long, Long> after = runDelays(names);
        long workers = 0, all = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long grown = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            all += grown;
            if (names.getOrDefault(e.getKey(), "").startsWith("worker-")) {
                workers += grown;
            }
        }
        release.countDown();
        for (Thread t : pool) {
            t.join();
        }
        Harness.done(new StringBuilder().append("threads=").append(threads).append(" rounds=").append(rounds)
                .append(" workers_runq_ns=").append(workers).append(" jvm_runq_ns=").append(all).toString());
    }
}
