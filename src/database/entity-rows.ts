import type { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

/**
 * Fixed SQL for an entity's hottest queries, with TypeORM's own per-column conversions (dates,
 * numbers) both ways, so rows are what `findOneBy()` returns and what `insert()` writes. The query
 * builder costs more CPU than the query on a primary-key read or a single-row insert, and TypeORM's
 * SQLite driver writes numeric parameters into the SQL text, so every id compiled a new statement; a
 * constant text with `?` is prepared once and reused.
 */
export class EntityRows<T extends ObjectLiteral> {
  /** `SELECT <every column> FROM <table> WHERE <primary key> = ?` */
  readonly selectByPrimaryKey: string;
  /** `<every column>`, escaped, in the order hydrate() reads them: for queries of the entity's own. */
  readonly selectedColumns: string;
  /** `INSERT INTO <table> (<every column the database does not generate>) VALUES (?, …)` */
  readonly insertRow: string;
  private readonly insertedColumns: ColumnMetadata[];

  constructor(private readonly repository: Repository<T>) {
    const { metadata } = repository;
    const { driver } = repository.manager.connection;
    const [primary] = metadata.primaryColumns;
    const table = driver.escape(metadata.tableName);
    const columns = metadata.columns.map((column) => driver.escape(column.databaseName)).join(', ');
    this.selectedColumns = columns;
    this.selectByPrimaryKey = `SELECT ${columns} FROM ${table} WHERE ${driver.escape(primary.databaseName)} = ?`;
    this.insertedColumns = metadata.columns.filter((column) => !column.isGenerated);
    this.insertRow =
      `INSERT INTO ${table} (${this.insertedColumns.map((column) => driver.escape(column.databaseName)).join(', ')}) ` +
      `VALUES (${this.insertedColumns.map(() => '?').join(', ')})`;
  }

  /**
   * Inserts one entity, every column but the generated key set (no column default applies, so there
   * is nothing to read back), through `manager` (a transaction's, or the default one); returns the key.
   */
  async insert(entity: T, manager: EntityManager = this.repository.manager): Promise<number> {
    const { sql, parameters } = this.insertStatement(entity);
    return insertedId(await manager.query(sql, parameters));
  }

  /** The INSERT of insert(), to run as part of a larger statement batch. */
  insertStatement(entity: T): SqlStatement {
    const { driver } = this.repository.manager.connection;
    const parameters = this.insertedColumns.map((column) => {
      const value: unknown = column.getEntityValue(entity);
      if (value === undefined) throw new Error(`${column.propertyName} must be set before the insert`);
      return driver.preparePersistentValue(value, column) as unknown;
    });
    return { sql: this.insertRow, parameters };
  }

  /** The entity with this primary key, or undefined; read through `manager` (a transaction's, or the default one). */
  async findByPrimaryKey(
    key: number | string,
    manager: EntityManager = this.repository.manager,
  ): Promise<T | undefined> {
    const rows = await manager.query<Array<Record<string, unknown>>>(this.selectByPrimaryKey, [key]);
    return rows.length === 0 ? undefined : this.hydrate(rows[0]);
  }

  /** An entity instance from a row of `SELECT <every column>`. */
  hydrate(row: Record<string, unknown>): T {
    const { metadata } = this.repository;
    const { driver } = this.repository.manager.connection;
    const entity = metadata.create() as Record<string, unknown>;
    for (const column of metadata.columns) {
      entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
    }
    return entity as T;
  }
}

/** One SQL statement with `?` placeholders and their values. */
export interface SqlStatement {
  sql: string;
  parameters: unknown[];
}

/** The generated id of an INSERT, from the driver's raw result: mysql2's insertId, better-sqlite3's lastInsertRowid. */
export function insertedId(raw: unknown): number {
  const id = typeof raw === 'object' && raw !== null && 'insertId' in raw ? raw.insertId : raw;
  if (typeof id !== 'number' && typeof id !== 'bigint')
    throw new Error(`the driver reported no inserted id: ${String(raw)}`);
  return Number(id);
}

/** Runs an UPDATE or DELETE in the context's transaction; returns how many rows it changed. */
export async function changedRows(manager: EntityManager, sql: string, parameters: unknown[]): Promise<number> {
  const runner = manager.queryRunner;
  if (runner === undefined || !runner.isTransactionActive) throw new Error(`runs in a transaction: ${sql}`);
  const result = await runner.query(sql, parameters, true);
  return result.affected ?? 0;
}
