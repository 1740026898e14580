package demo.jdbc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DTrace example's investigation as a workload: the PostgreSQL JDBC driver (pgjdbc) against a real
 * server, several threads with a connection each, prepared statements, queries returning many
 * rows, and getString/getInt over every column of every row; plus a query that waits on the
 * server (SELECT pg_sleep), so that the driver's methods that read the socket show elapsed time
 * far above their on-CPU time.
 *
 * Set-up, before READY: creates the table jmt_rows (id int, name text, city text, qty int) with
 * ROWS rows, using Statement.execute/executeUpdate only, and opens one connection per thread.
 * Then, untraced (a tracer attaches after it), it times getString and getInt on rows already in
 * memory and prints BASELINE getString_ns=.. getInt_ns=.. (ns per call, the JVM's own timing,
 * probe flag on but nothing attached). Then it prints READY and waits for a line on stdin (unless
 * --no-wait, which also skips the baseline: in launch mode it would be traced and counted), so
 * that a tracer can attach before the work starts. The work, per thread, interleaved:
 *
 *   ROUNDS x  connection.prepareStatement(SELECT ... FROM jmt_rows WHERE qty >= ?)
 *             and EXECUTES x executeQuery() on it, reading every row: getInt(1), getString(2),
 *             getString(3), getInt(4)  (by column index only)
 *   SLEEPS x  connection.createStatement().executeQuery("SELECT pg_sleep(SLEEP_MS / 1000)")
 *             (the only calls of Statement.executeQuery(String))
 *
 * At the end it prints what it did, counted as it went (every thread's calls added up):
 *   DONE threads=.. prepares=.. executes=.. sleeps=.. sleep_ms=.. rows=.. getString=.. getInt=.. work_ms=..
 *
 * usage: JdbcLoad [--no-wait] [--threads N] [--rows N] [--rounds N] [--executes N]
 *                 [--sleeps N] [--sleep-ms N] [--user U] URL
 *   defaults: 4 threads, 1000 rows, 3 rounds, 2 executes, 5 sleeps of 50 ms; the last of an
 *   option given twice counts. URL: jdbc:postgresql://HOST:PORT/DATABASE[?user=U] (default: the
 *   JDBC_URL environment variable). --no-wait: no READY, no wait for stdin (launch mode).
 */
public final class JdbcLoad {
    private static final String SELECT_SQL =
            "SELECT id, name, city, qty FROM jmt_rows WHERE qty >= ? ORDER BY id";

    private static final AtomicLong prepares = new AtomicLong();
    private static final AtomicLong executes = new AtomicLong();
    private static final AtomicLong sleeps = new AtomicLong();
    private static final AtomicLong rows = new AtomicLong();
    private static final AtomicLong getStrings = new AtomicLong();
    private static final AtomicLong getInts = new AtomicLong();
    private static volatile long sink;

    private JdbcLoad() {}

    private static final class Options {
        boolean wait = true;
        int threads = 4;
        int rows = 1000;
        int rounds = 3;
        int executes = 2;
        int sleeps = 5;
        int sleepMs = 50;
        String user = null;
        String url = System.getenv("JDBC_URL");
    }

    private static int positive(String name, String value, boolean zeroOk) {
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a number, not '" + value + "'");
        }
        if (n < 0 || (n == 0 && !zeroOk)) {
            throw new IllegalArgumentException(name + " must be " + (zeroOk ? ">= 0" : "> 0"));
        }
        return n;
    }

    private static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--no-wait")) {
                o.wait = false;
                continue;
            }
            if (!a.startsWith("--")) {
                o.url = a;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--threads": o.threads = positive(a, v, false); break;
                case "--rows": o.rows = positive(a, v, false); break;
                case "--rounds": o.rounds = positive(a, v, true); break;
                case "--executes": o.executes = positive(a, v, false); break;
                case "--sleeps": o.sleeps = positive(a, v, true); break;
                case "--sleep-ms": o.sleepMs = positive(a, v, true); break;
                case "--user": o.user = v; break;
                default: throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (o.url == null || o.url.isEmpty()) {
            throw new IllegalArgumentException("no URL: give jdbc:postgresql://HOST:PORT/DB or set JDBC_URL");
        }
        return o;
    }

    private static Connection connect(Options o) throws SQLException {
        return o.user == null ? DriverManager.getConnection(o.url)
                              : DriverManager.getConnection(o.url, o.user, "");
    }

    /** Creates jmt_rows with ROWS rows; Statement.execute/executeUpdate only. */
    private static void createTable(Options o) throws SQLException {
        try (Connection c = connect(o); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS jmt_rows");
            st.execute("CREATE TABLE jmt_rows (id int PRIMARY KEY, name text NOT NULL,"
                    + " city text NOT NULL, qty int NOT NULL)");
            st.executeUpdate("INSERT INTO jmt_rows SELECT i, 'customer-' || i || '-' || md5(i::text),"
                    + " (ARRAY['Lisbon','Oslo','Kyoto','Lima','Perth'])[1 + i % 5], i % 97"
                    + " FROM generate_series(1, " + o.rows + ") AS i");
            st.execute("ANALYZE jmt_rows");
        }
    }

    /** One execution of the prepared SELECT, reading every column of every row. */
    private static void readAll(PreparedStatement ps) throws SQLException {
        ps.setInt(1, 0);  // qty >= 0: every row
        long n = 0;
        long x = 0;
        try (ResultSet rs = ps.executeQuery()) {
            executes.incrementAndGet();
            while (rs.next()) {
                int id = rs.getInt(1);
                String name = rs.getString(2);
                String city = rs.getString(3);
                int qty = rs.getInt(4);
                x += id + name.length() + city.length() + qty;
                n++;
            }
        }
        rows.addAndGet(n);
        getInts.addAndGet(2 * n);
        getStrings.addAndGet(2 * n);
        sink += x;
    }

    /**
     * ns per getString and per getInt call on a scrollable result of every row, held in memory:
     * passes of next() alone, next() + 2 x getString, next() + 2 x getInt, after warm-up passes;
     * each figure is (its pass - the next()-only pass) / calls, the median of the timed rounds.
     */
    private static long[] baseline(Connection c) throws SQLException {
        final int warmups = 30;
        final int rounds = 9;
        long[][] ns = new long[rounds][];
        try (Statement st = c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_READ_ONLY);
                ResultSet rs = st.executeQuery("SELECT id, name, city, qty FROM jmt_rows ORDER BY id")) {
            for (int r = 0; r < warmups + rounds; r++) {
                long t0 = System.nanoTime();
                long n = 0;
                rs.beforeFirst();
                while (rs.next()) {
                    n++;
                }
                long t1 = System.nanoTime();
                long x = 0;
                rs.beforeFirst();
                while (rs.next()) {
                    x += rs.getString(2).length() + rs.getString(3).length();
                }
                long t2 = System.nanoTime();
                rs.beforeFirst();
                while (rs.next()) {
                    x += rs.getInt(1) + rs.getInt(4);
                }
                long t3 = System.nanoTime();
                sink += x + n;
                if (r >= warmups) {
                    long next = t1 - t0;
                    ns[r - warmups] = new long[] {
                        Math.max(0, (t2 - t1 - next) / (2 * n)), Math.max(0, (t3 - t2 - next) / (2 * n))};
                }
            }
        }
        long[] getString = new long[rounds];
        long[] getInt = new long[rounds];
        for (int r = 0; r < rounds; r++) {
            getString[r] = ns[r][0];
            getInt[r] = ns[r][1];
        }
        java.util.Arrays.sort(getString);
        java.util.Arrays.sort(getInt);
        return new long[] {getString[rounds / 2], getInt[rounds / 2]};
    }

    private static void sleepOnServer(Connection c, int ms) throws SQLException {
        String sql = "SELECT pg_sleep(" + (ms / 1000.0) + ")";
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                // pg_sleep returns one row with a void value
            }
        }
        sleeps.incrementAndGet();
    }

    private static void work(Connection c, Options o) throws SQLException {
        for (int i = 0; i < Math.max(o.rounds, o.sleeps); i++) {
            if (i < o.rounds) {
                try (PreparedStatement ps = c.prepareStatement(SELECT_SQL)) {
                    prepares.incrementAndGet();
                    for (int e = 0; e < o.executes; e++) {
                        readAll(ps);
                    }
                }
            }
            if (i < o.sleeps) {
                sleepOnServer(c, o.sleepMs);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("JdbcLoad: " + e.getMessage());
            System.err.println("usage: JdbcLoad [--no-wait] [--threads N] [--rows N] [--rounds N] [--executes N]"
                    + " [--sleeps N] [--sleep-ms N] [--user U] URL");
            System.exit(2);
            return;
        }
        createTable(o);
        List<Connection> connections = new ArrayList<>();
        for (int t = 0; t < o.threads; t++) {
            connections.add(connect(o));
        }
        if (o.wait) {
            long[] ns = baseline(connections.get(0));
            System.out.println("BASELINE getString_ns=" + ns[0] + " getInt_ns=" + ns[1]);
            System.out.println("READY");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
        }

        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < o.threads; t++) {
            Connection c = connections.get(t);
            Thread th = new Thread(() -> {
                try {
                    work(c, o);
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "jdbc-" + (t + 1));
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        long workMs = (System.nanoTime() - t0) / 1_000_000;
        for (Connection c : connections) {
            c.close();
        }
        if (!failures.isEmpty()) {
            for (Throwable e : failures) {
                e.printStackTrace();
            }
            System.exit(1);
        }
        System.out.println("DONE threads=" + o.threads + " prepares=" + prepares.get()
                + " executes=" + executes.get() + " sleeps=" + sleeps.get() + " sleep_ms=" + o.sleepMs
                + " rows=" + rows.get() + " getString=" + getStrings.get() + " getInt=" + getInts.get()
                + " work_ms=" + workMs);
        System.out.flush();
    }
}
