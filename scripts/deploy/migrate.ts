// docker-compose's one-shot `migrate` service: applies supabase/migrations (forward only) to DATABASE_URL
// and sets the login roles' passwords from the environment (with REPLICATION_PASSWORD, the read
// replica's streaming role too, and the cap on the WAL its slot holds), then exits.
import { ensureReplication, setLoginPasswords } from '../../stack/database.ts';
import { migrate } from '../../stack/migrations.ts';

const required = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the migrate service needs DATABASE_URL, AUTHENTICATOR_PASSWORD and WRITER_DB_PASSWORD.`);
  return value;
};

try {
  const adminUrl = required('DATABASE_URL');
  await migrate(adminUrl, (line) => console.log(line));
  await setLoginPasswords(adminUrl, { AUTHENTICATOR_PASSWORD: required('AUTHENTICATOR_PASSWORD'), WRITER_DB_PASSWORD: required('WRITER_DB_PASSWORD') });
  if (process.env.REPLICATION_PASSWORD) await ensureReplication(adminUrl, process.env.REPLICATION_PASSWORD);
  console.log('Migrations applied; login roles ready.');
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
